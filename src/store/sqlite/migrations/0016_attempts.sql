-- 0016: attempts (issue 17). Each claim that takes a run's lease starts an attempt: its number, the worker (lease
-- owner), the lease token, when it started and ended, and how it ended (running, completed, parked, lease_expired,
-- preempted, released, cancelled). The claim's transaction writes the row; the commit that ends or parks the run, the
-- release at shutdown, or the next claim (which finds the lease expired) closes it.
-- runs.attempts: attempts so far (the number of the latest). runs.lease_expiries: every lease that expired unreleased,
-- never reset (lease_losses, the poison counter, is reset by each commit). runs.lease_expired_at: when the lease the
-- latest probation claim took over had expired (null when that claim took over none): read by the claim only.
ALTER TABLE runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN lease_expiries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN lease_expired_at INTEGER;

CREATE TABLE run_attempts (
  run_id       TEXT NOT NULL,
  number       INTEGER NOT NULL,
  worker       TEXT NOT NULL,
  lease_token  INTEGER NOT NULL,
  started_at   INTEGER NOT NULL,
  ended_at     INTEGER,
  ending       TEXT NOT NULL,
  PRIMARY KEY (run_id, number)
) STRICT, WITHOUT ROWID;
-- Runs claimed before this migration: their claims so far (held-back probation claims aside, rare).
UPDATE runs SET attempts = lease_token;
