-- 0013: preemption of batch runs for interactive runs (issue 7).
-- preemptions: how many times the run was preempted; preempted_at: the last time. preempted_lease_token: the lease
-- the last preemption ended, so the claim after it (token + 1) knows it is the one that measures the requeue delay.
-- Starved interactive runs are found by a range of runs_claimable (priority_rank, claim_after): no new index.
ALTER TABLE runs ADD COLUMN preemptions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN preempted_at BIGINT;
ALTER TABLE runs ADD COLUMN preempted_lease_token BIGINT;
