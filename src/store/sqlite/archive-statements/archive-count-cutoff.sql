-- The newest ended run a count-based retention no longer keeps: the (:keep_runs + 1)-th newest ended run of the tenant.
-- Params: :tenant_id, :keep_runs. Result: { ended_at, id } or no row (the tenant has no more than :keep_runs).
SELECT ended_at, id FROM runs
WHERE tenant_id = :tenant_id AND ended_at IS NOT NULL
ORDER BY ended_at DESC, id DESC
LIMIT 1 OFFSET :keep_runs
