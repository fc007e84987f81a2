-- Params: :key_hash. Returns the tenant owning the key, or nothing.
SELECT t.id, t.name, t.created_at FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = :key_hash
