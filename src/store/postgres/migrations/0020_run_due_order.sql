-- 0020: runs are claimed, inside a tenant and priority class, by when they are due (issue 27): their deadline, else
-- their admission plus UNDATED_RUN_DUE_AFTER_MS (300 s, src/domain/run-order.ts), never by when they last became
-- claimable, so a run re-queued after a wait does not go behind runs admitted after it. due_at is written once, at
-- insert. runs_due_claim serves the claim's per-tenant order; claim_after is in the index so runs not yet claimable
-- (held under a lease, timers not due) are skipped inside it.
ALTER TABLE runs ADD COLUMN due_at BIGINT NOT NULL DEFAULT 0;
UPDATE runs SET due_at = coalesce(deadline_at, created_at + 300000);
CREATE INDEX runs_due_claim ON runs (tenant_id, priority_rank, due_at, claim_after) WHERE claim_after IS NOT NULL;
-- Deadline-aware admission (admission-sample.sql): an agent's unfinished runs by due time, its ended runs by end.
CREATE INDEX runs_agent_live_due ON runs (agent, due_at) WHERE ended_at IS NULL;
CREATE INDEX runs_agent_ended ON runs (agent, ended_at) WHERE ended_at IS NOT NULL;
-- Deadline-aware admission's estimate of when the run finishes (NULL: no deadline, or nothing measured).
ALTER TABLE runs ADD COLUMN expected_finish_at BIGINT;
