-- Counts the runs of a tenant a worker holds now (what max_concurrent_runs caps; index runs_live).
-- Params: :tenant_id. Returns held.
SELECT count(*) AS held FROM runs
WHERE tenant_id = :tenant_id AND ended_at IS NULL AND status IN ('running', 'cancelling') AND lease_owner IS NOT NULL
