-- Deletes the tenant's secret (every trace of its value). Params: :tenant_id, :name. Returns name, or nothing.
DELETE FROM secrets WHERE tenant_id = :tenant_id AND name = :name RETURNING name
