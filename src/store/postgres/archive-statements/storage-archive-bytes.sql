-- Archived bytes and runs per tenant (compressed chunk sizes). Params: none.
-- Result: { tenant_id, archive_bytes, archived_runs } rows.
SELECT a.tenant_id, COALESCE(SUM(c.bytes), 0)::bigint AS archive_bytes, COUNT(DISTINCT a.run_id) AS archived_runs
FROM run_archives a LEFT JOIN run_archive_chunks c ON c.run_id = a.run_id
GROUP BY a.tenant_id
