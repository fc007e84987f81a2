-- Changes a tenant's quotas and limits: each field is set only when its set_ flag is 1 (a NULL limit means unlimited).
-- Params: :id, :now, and for each of weight, max_concurrent_runs, max_queued_runs, rpm, tpm, daily_token_budget,
--         daily_cost_budget_usd, pool_caps, redact, egress_allow (JSON text): :set_<field> and :<field>.
-- Returns the updated tenant row, or nothing when there is no such tenant.
UPDATE tenants SET
  weight = CASE WHEN :set_weight::int = 1 THEN :weight::int ELSE weight END,
  max_concurrent_runs = CASE WHEN :set_max_concurrent_runs::int = 1 THEN :max_concurrent_runs::int ELSE max_concurrent_runs END,
  max_queued_runs = CASE WHEN :set_max_queued_runs::int = 1 THEN :max_queued_runs::int ELSE max_queued_runs END,
  rpm = CASE WHEN :set_rpm::int = 1 THEN :rpm::int ELSE rpm END,
  tpm = CASE WHEN :set_tpm::int = 1 THEN :tpm::int ELSE tpm END,
  daily_token_budget = CASE WHEN :set_daily_token_budget::int = 1 THEN :daily_token_budget::bigint ELSE daily_token_budget END,
  daily_cost_budget_usd = CASE WHEN :set_daily_cost_budget_usd::int = 1 THEN :daily_cost_budget_usd::double precision ELSE daily_cost_budget_usd END,
  pool_caps = CASE WHEN :set_pool_caps::int = 1 THEN :pool_caps::text ELSE pool_caps END,
  redact = CASE WHEN :set_redact::int = 1 THEN :redact::text ELSE redact END,
  egress_allow = CASE WHEN :set_egress_allow::int = 1 THEN :egress_allow::text ELSE egress_allow END,
  updated_at = :now::bigint
WHERE id = :id
RETURNING id, name, created_at, weight, max_concurrent_runs, max_queued_runs, rpm, tpm, daily_token_budget, daily_cost_budget_usd, pool_caps, redact, egress_allow
