-- 0015: run lineage (issue 17): reruns, resets and forks of runs.
-- rerun_of: the run this one reruns (same agent and input, nothing copied). reset_from_run_id/reset_from_position:
-- the run whose journal prefix (positions 1..position) this one copied before running on from there.
-- random_seed: what seeds ctx.random()/ctx.uuid() (null: the run id), the reset source's seed, so a reset run
-- replays the same random values over its copied prefix.
ALTER TABLE runs ADD COLUMN rerun_of TEXT;
ALTER TABLE runs ADD COLUMN reset_from_run_id TEXT;
ALTER TABLE runs ADD COLUMN reset_from_position INTEGER;
ALTER TABLE runs ADD COLUMN random_seed TEXT;
-- ?rerunOf= lists the reruns of one run: a partial index holds only the runs that are reruns.
CREATE INDEX runs_rerun_of ON runs (rerun_of) WHERE rerun_of IS NOT NULL;
