-- Per-tenant usage: sums of the committed counters of the tenant's runs (uses runs_by_tenant).
-- Params: :tenant_id. Returns one row: runs, steps, input_tokens, output_tokens, cost_usd (0 when it has no runs).
SELECT COUNT(*) AS runs, COALESCE(SUM(steps), 0) AS steps, COALESCE(SUM(input_tokens), 0) AS input_tokens,
       COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(cost_usd), 0) AS cost_usd
FROM runs WHERE tenant_id = :tenant_id
