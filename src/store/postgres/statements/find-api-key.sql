-- The key with this hash and its tenant (with quotas), revoked or expired ones too (the caller tells why it
-- refuses them). Params: :key_hash. Returns the key's columns as key_*, the tenant's as in get-tenant, or nothing.
SELECT k.id AS key_id, k.name AS key_name, k.scopes AS key_scopes, k.created_at AS key_created_at,
       k.expires_at AS key_expires_at, k.last_used_at AS key_last_used_at, k.revoked_at AS key_revoked_at,
       k.requests_per_minute AS key_requests_per_minute,
       t.id, t.name, t.created_at, t.weight, t.max_concurrent_runs, t.max_queued_runs, t.rpm, t.tpm, t.daily_token_budget,
       t.daily_cost_budget_usd, t.pool_caps, t.redact, t.egress_allow
FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = :key_hash
