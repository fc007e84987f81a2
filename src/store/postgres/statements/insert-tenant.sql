-- Creates a tenant with its quotas and limits (NULL limits are unlimited; pool_caps and redact are JSON text).
-- Params: :id, :name, :weight, :max_concurrent_runs, :max_queued_runs, :rpm, :tpm, :daily_token_budget,
--         :daily_cost_budget_usd, :pool_caps, :redact, :egress_allow (JSON text or NULL), :now. Returns the id, or no row when the name is taken already.
INSERT INTO tenants (id, name, weight, max_concurrent_runs, max_queued_runs, rpm, tpm, daily_token_budget, daily_cost_budget_usd, pool_caps, redact, egress_allow, created_at, updated_at)
VALUES (:id, :name, :weight::int, :max_concurrent_runs::int, :max_queued_runs::int, :rpm::int, :tpm::int, :daily_token_budget::bigint,
        :daily_cost_budget_usd::double precision, :pool_caps::text, :redact::text, :egress_allow::text, :now::bigint, :now::bigint)
ON CONFLICT (name) DO NOTHING
RETURNING id
