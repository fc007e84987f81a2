-- 0011: tenant rate limits, daily budgets and per-pool caps (issue 7), set through the admin API.
-- rpm / tpm: the tenant's model requests and tokens per minute (NULL: the models file's tenantLimits, else none).
-- daily_token_budget / daily_cost_budget_usd: model tokens (input + output) and USD per UTC day; NULL: unlimited.
-- Once spent, the tenant's model calls wait (`tenant_budget_exhausted`) until the next UTC midnight or a raise.
-- pool_caps: JSON object, pool name → max concurrent effects of the tenant in that pool (stored here, enforced by
-- the pool scheduler). journal_model_by_end serves the daily usage sum (model effects that ended since a time).
ALTER TABLE tenants ADD COLUMN rpm INTEGER CHECK (rpm >= 1);
ALTER TABLE tenants ADD COLUMN tpm INTEGER CHECK (tpm >= 1);
ALTER TABLE tenants ADD COLUMN daily_token_budget INTEGER CHECK (daily_token_budget >= 0);
ALTER TABLE tenants ADD COLUMN daily_cost_budget_usd REAL CHECK (daily_cost_budget_usd >= 0);
ALTER TABLE tenants ADD COLUMN pool_caps TEXT NOT NULL DEFAULT '{}';

CREATE INDEX journal_model_by_end ON journal (ended_at, run_id) WHERE kind = 'model' AND status = 'succeeded';
