-- A tenant's ended runs due for archival and not archived yet, oldest first, whose archival claim is free or expired:
-- ended before :ended_before (day retention; -1: none), or at/before (:count_ended_at, :count_id) (count retention;
-- -1: none). A quarantined run (failed with poison_run) is never due: it waits for an operator, and a re-admitted
-- run resumes from its journal.
-- Params: :tenant_id, :ended_before, :count_ended_at, :count_id, :now, :limit. Result: { id, ended_at } rows.
SELECT r.id, r.ended_at FROM runs r
LEFT JOIN run_archives a ON a.run_id = r.id
WHERE r.tenant_id = :tenant_id AND r.ended_at IS NOT NULL
  AND NOT (r.status = 'failed' AND coalesce(json_extract(r.error, '$.code'), '') = 'poison_run')
  AND (a.run_id IS NULL OR (a.pruned_at IS NULL AND (a.claim_expires_at IS NULL OR a.claim_expires_at <= :now)))
  AND (r.ended_at < :ended_before
    OR r.ended_at < :count_ended_at OR (r.ended_at = :count_ended_at AND r.id <= :count_id))
ORDER BY r.ended_at, r.id
LIMIT :limit
