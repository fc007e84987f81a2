-- Params: :id. Returns the tenant row with its quotas, or nothing.
SELECT id, name, created_at, weight, max_concurrent_runs, max_queued_runs, rpm, tpm, daily_token_budget, daily_cost_budget_usd, pool_caps, redact, egress_allow FROM tenants WHERE id = :id
