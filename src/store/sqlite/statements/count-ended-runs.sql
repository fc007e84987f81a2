-- A tenant's runs that ended at or after :since, counted per :bucket_ms-wide time bucket and final status.
-- Params: :tenant_id, :since (ms), :bucket_ms. Result: bucket_start (ms), status, runs; oldest bucket first.
SELECT (ended_at / CAST(:bucket_ms AS INTEGER)) * CAST(:bucket_ms AS INTEGER) AS bucket_start, status, COUNT(*) AS runs
FROM runs
WHERE tenant_id = :tenant_id AND ended_at IS NOT NULL AND ended_at >= :since
GROUP BY bucket_start, status
ORDER BY bucket_start, status
