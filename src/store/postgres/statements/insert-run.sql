-- Creates a queued run, claimable at once; its first event (seq 1) is appended separately.
-- Marks its tenant backlogged for fair claims (0048) unless it is marked already (then nothing is written or locked),
-- so the next claim sees the tenant at once rather than at the next backlog refresh; a tenant marked anew restarts at
-- the clock (the least virtual time of the backlogged tenants, else fair_clock), as flag-fair-tenants does.
-- Params: every column below (:due_at: src/domain/run-order.ts; :on_parent_end: NULL but for a delegated child, 0037). Returns the new row. Fails on a duplicate (tenant_id, idempotency_key).
WITH marked AS (
  INSERT INTO fair_tenant_clocks (tenant_id, vtime, backlogged)
  SELECT :tenant_id::text,
    coalesce((SELECT min(vtime) FROM fair_tenant_clocks WHERE backlogged), (SELECT vtime FROM fair_clock WHERE id = 1), 0),
    true
  WHERE NOT EXISTS (SELECT 1 FROM fair_tenant_clocks WHERE tenant_id = :tenant_id::text AND backlogged)
  ON CONFLICT (tenant_id) DO UPDATE SET backlogged = true, vtime = greatest(fair_tenant_clocks.vtime, EXCLUDED.vtime)
)
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
