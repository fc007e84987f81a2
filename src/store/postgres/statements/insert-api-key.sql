-- Attaches a hashed API key to a tenant; a key already attached is left as it is.
-- Params: :key_hash, :tenant_id, :now.
INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES (:key_hash, :tenant_id, :now)
ON CONFLICT (key_hash) DO NOTHING
