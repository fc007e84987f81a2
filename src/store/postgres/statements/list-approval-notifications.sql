-- The tenant's approval notifications, newest first, optionally of one run, before a cursor (created_at, id).
-- Params: :tenant_id, :run_id (or NULL), :before_at (or NULL), :before_id (or NULL), :limit. Result: rows.
SELECT * FROM approval_notifications
WHERE tenant_id = :tenant_id::text AND (:run_id::text IS NULL OR run_id = :run_id::text)
  AND (:before_at::bigint IS NULL OR created_at < :before_at::bigint
       OR (created_at = :before_at::bigint AND id < :before_id::text))
ORDER BY created_at DESC, id DESC
LIMIT :limit::int
