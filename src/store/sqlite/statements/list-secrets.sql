-- The tenant's secrets by name, without their sealed values. Params: :tenant_id. Returns s.name, s.version,
-- s.created_at, s.updated_at per secret.
SELECT s.name, s.version, s.created_at, s.updated_at FROM secrets s WHERE s.tenant_id = :tenant_id ORDER BY s.name
