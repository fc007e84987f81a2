-- One key of the tenant. Params: :tenant_id, :id. Returns k.id, k.tenant_id, k.name, k.scopes, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, k.requests_per_minute, or nothing.
SELECT k.id, k.tenant_id, k.name, k.scopes, k.created_at, k.expires_at, k.last_used_at, k.revoked_at, k.requests_per_minute FROM api_keys k WHERE k.tenant_id = :tenant_id AND k.id = :id
