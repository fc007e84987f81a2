-- Runs that have not ended, per tenant and status (index runs_live).
-- Params: none. Returns tenant_id, status, runs, stalled (those marked stalled now).
SELECT tenant_id, status, count(*)::int AS runs, (count(*) FILTER (WHERE stalled IS NOT NULL))::int AS stalled FROM runs WHERE ended_at IS NULL GROUP BY tenant_id, status
