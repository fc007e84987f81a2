-- Creates a queued run, claimable at once; its first event (seq 1) is appended separately.
-- Params: every column below (:due_at: src/domain/run-order.ts; :on_parent_end: NULL but for a delegated child, 0037). Returns the new row. Fails on a duplicate (tenant_id, idempotency_key).
INSERT INTO runs (
  id, tenant_id, agent, agent_version, agent_key, input, status, state_version, priority, priority_rank,
  budget, metadata, deadline_at, parent_run_id, idempotency_key, request_hash, claim_after,
  next_event_seq, created_at, updated_at, due_at, expected_finish_at, egress_allow, on_parent_end
) VALUES (
  :id, :tenant_id, :agent, :agent_version, :agent_key, :input, 'queued', 1, :priority, :priority_rank,
  :budget, :metadata, :deadline_at, :parent_run_id, :idempotency_key, :request_hash, :now,
  2, :now, :now, :due_at, :expected_finish_at, :egress_allow, :on_parent_end
)
RETURNING *
