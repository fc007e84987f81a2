-- A run just inserted whose estimated model spend exceeds what its tenant has left of its daily budget (spend
-- admission, src/api/spend-admission.ts): it waits `tenant_budget_exhausted` until :wake_at (the budget renews), or
-- until a budget patch makes it due (wake-budget-waiting-runs). Its `run.waiting` event takes seq 2.
-- Params: :id, :wake_at (ms), :now. Returns the row.
UPDATE runs SET status = 'waiting', waiting_reason = 'tenant_budget_exhausted', waiting_since = :now::bigint,
  wake_at = :wake_at::bigint, claim_after = :wake_at::bigint, next_event_seq = 3
WHERE id = :id
RETURNING *
