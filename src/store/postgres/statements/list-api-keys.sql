-- The tenant's keys, oldest first (revoked ones too). Params: :tenant_id. Returns k.id, k.tenant_id, k.name, k.scopes, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, k.requests_per_minute.
SELECT k.id, k.tenant_id, k.name, k.scopes, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, k.requests_per_minute FROM api_keys k WHERE k.tenant_id = :tenant_id ORDER BY k.created_at, k.id
