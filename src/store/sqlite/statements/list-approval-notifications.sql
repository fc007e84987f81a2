-- The tenant's approval notifications, newest first, optionally of one run, before a cursor (created_at, id).
-- Params: :tenant_id, :run_id (or NULL), :before_at (or NULL), :before_id (or NULL), :limit. Result: rows.
SELECT * FROM approval_notifications
WHERE tenant_id = :tenant_id AND (:run_id IS NULL OR run_id = :run_id)
  AND (:before_at IS NULL OR created_at < :before_at OR (created_at = :before_at AND id < :before_id))
ORDER BY created_at DESC, id DESC
LIMIT :limit
