-- Params: :key_hash. Returns the tenant owning the key (with its quotas), or nothing.
SELECT t.id, t.name, t.created_at, t.weight, t.max_concurrent_runs, t.max_queued_runs
FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = :key_hash
