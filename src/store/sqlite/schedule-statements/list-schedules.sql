-- A page of a tenant's schedules, oldest id first, after the cursor id if one is given.
-- Params: :tenant_id, :after_id (or NULL), :limit.
SELECT * FROM schedules
WHERE tenant_id = :tenant_id AND deleted_at IS NULL AND (:after_id IS NULL OR id > :after_id)
ORDER BY id
LIMIT :limit
