-- Attaches a hashed API key to a tenant with its id, name, scopes (JSON text), expiry (NULL: never) and
-- request rate limit (NULL: the process default); a key
-- already attached is left as it is. Params: :id, :key_hash, :tenant_id, :name, :scopes, :expires_at, :requests_per_minute, :now.
INSERT INTO api_keys (id, key_hash, tenant_id, name, scopes, expires_at, requests_per_minute, created_at)
VALUES (:id, :key_hash, :tenant_id, :name, :scopes, :expires_at, :requests_per_minute, :now)
ON CONFLICT (key_hash) DO NOTHING
