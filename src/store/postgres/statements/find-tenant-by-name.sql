-- Params: :name. Returns the tenant row (with its quotas) or nothing.
SELECT id, name, created_at, weight, max_concurrent_runs, max_queued_runs FROM tenants WHERE name = :name
