-- Revokes the tenant's key now (a revoked key keeps its first revocation time).
-- Params: :tenant_id, :id, :now. Returns the key's id, or nothing when the tenant has no such key.
UPDATE api_keys SET revoked_at = COALESCE(revoked_at, :now::bigint) WHERE tenant_id = :tenant_id AND id = :id RETURNING id
