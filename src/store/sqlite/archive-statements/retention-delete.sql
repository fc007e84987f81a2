-- Removes a tenant's retention override. Params: :tenant_id. Result: rows deleted.
DELETE FROM tenant_retention WHERE tenant_id = :tenant_id
