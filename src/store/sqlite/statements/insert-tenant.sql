-- Creates a tenant with its quotas and limits (NULL limits are unlimited; pool_caps and redact are JSON text).
-- Params: :id, :name, :weight, :max_concurrent_runs, :max_queued_runs, :rpm, :tpm, :daily_token_budget,
--         :daily_cost_budget_usd, :pool_caps, :redact, :egress_allow (JSON text or NULL), :now. Returns the id, or no row when the name is taken already.
INSERT INTO tenants (id, name, weight, max_concurrent_runs, max_queued_runs, rpm, tpm, daily_token_budget, daily_cost_budget_usd, pool_caps, redact, egress_allow, created_at, updated_at)
VALUES (:id, :name, :weight, :max_concurrent_runs, :max_queued_runs, :rpm, :tpm, :daily_token_budget, :daily_cost_budget_usd, :pool_caps, :redact, :egress_allow, :now, :now)
ON CONFLICT (name) DO NOTHING
RETURNING id
