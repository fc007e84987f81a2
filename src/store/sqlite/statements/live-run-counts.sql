-- Runs that have not ended, per tenant and status (index runs_live).
-- Params: none. Returns tenant_id, status, runs, stalled (those marked stalled now).
SELECT tenant_id, status, count(*) AS runs, sum(stalled IS NOT NULL) AS stalled FROM runs WHERE ended_at IS NULL GROUP BY tenant_id, status
