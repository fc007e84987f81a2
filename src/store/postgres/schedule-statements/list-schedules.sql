-- A page of a tenant's schedules, oldest id first, after the cursor id if one is given.
-- Params: :tenant_id, :after_id (or NULL), :limit.
SELECT * FROM schedules
WHERE tenant_id = :tenant_id::text AND deleted_at IS NULL AND (:after_id::text IS NULL OR id > :after_id::text)
ORDER BY id
LIMIT :limit::int
