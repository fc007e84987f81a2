-- Clears a tenant's webhook allowlist (before writing the new one in the same transaction).
-- Params: :tenant_id.
DELETE FROM webhook_allowlist WHERE tenant_id = :tenant_id::text
