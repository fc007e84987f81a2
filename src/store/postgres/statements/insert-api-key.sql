-- Attaches a hashed API key to a tenant with its id, name, scopes (JSON text) and expiry (NULL: never); a key
-- already attached is left as it is. Params: :id, :key_hash, :tenant_id, :name, :scopes, :expires_at, :now.
INSERT INTO api_keys (id, key_hash, tenant_id, name, scopes, expires_at, created_at)
VALUES (:id::text, :key_hash::text, :tenant_id::text, :name::text, :scopes::text, :expires_at::bigint, :now::bigint)
ON CONFLICT (key_hash) DO NOTHING
