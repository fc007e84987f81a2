-- Opens a run's archive record if it has none (idempotent).
-- Params: :run_id, :tenant_id, :now. Result: changed-row count.
INSERT INTO run_archives (run_id, tenant_id, created_at) VALUES (:run_id, :tenant_id, :now)
ON CONFLICT (run_id) DO NOTHING
