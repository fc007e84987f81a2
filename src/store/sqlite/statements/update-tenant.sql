-- Changes a tenant's quotas and limits: each field is set only when its set_ flag is 1 (a NULL limit means unlimited).
-- Params: :id, :now, and for each of weight, max_concurrent_runs, max_queued_runs, rpm, tpm, daily_token_budget,
--         daily_cost_budget_usd, pool_caps, redact, egress_allow (JSON text): :set_<field> and :<field>.
-- Returns the updated tenant row, or nothing when there is no such tenant.
UPDATE tenants SET
  weight = CASE WHEN :set_weight = 1 THEN :weight ELSE weight END,
  max_concurrent_runs = CASE WHEN :set_max_concurrent_runs = 1 THEN :max_concurrent_runs ELSE max_concurrent_runs END,
  max_queued_runs = CASE WHEN :set_max_queued_runs = 1 THEN :max_queued_runs ELSE max_queued_runs END,
  rpm = CASE WHEN :set_rpm = 1 THEN :rpm ELSE rpm END,
  tpm = CASE WHEN :set_tpm = 1 THEN :tpm ELSE tpm END,
  daily_token_budget = CASE WHEN :set_daily_token_budget = 1 THEN :daily_token_budget ELSE daily_token_budget END,
  daily_cost_budget_usd = CASE WHEN :set_daily_cost_budget_usd = 1 THEN :daily_cost_budget_usd ELSE daily_cost_budget_usd END,
  pool_caps = CASE WHEN :set_pool_caps = 1 THEN :pool_caps ELSE pool_caps END,
  redact = CASE WHEN :set_redact = 1 THEN :redact ELSE redact END,
  egress_allow = CASE WHEN :set_egress_allow = 1 THEN :egress_allow ELSE egress_allow END,
  updated_at = :now
WHERE id = :id
RETURNING id, name, created_at, weight, max_concurrent_runs, max_queued_runs, rpm, tpm, daily_token_budget, daily_cost_budget_usd, pool_caps, redact, egress_allow
