-- Params: :key_hash. Returns the tenant owning the key (with its quotas), or nothing (also for a revoked key; the API
-- authenticates with find-api-key, which tells why it refuses a key).
SELECT t.id, t.name, t.created_at, t.weight, t.max_concurrent_runs, t.max_queued_runs, t.rpm, t.tpm, t.daily_token_budget, t.daily_cost_budget_usd, t.pool_caps, t.redact, t.egress_allow
FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = :key_hash AND k.revoked_at IS NULL
