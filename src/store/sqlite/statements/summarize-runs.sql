-- A tenant's runs grouped by agent and status: counts, consumption, and the oldest queued / waiting times.
-- Params: :tenant_id. Result: agent, status, runs, steps, input_tokens, output_tokens, cost_usd,
-- oldest_claimable_at (queued only, or NULL), oldest_waiting_since (or NULL). Scans the tenant's runs (runs_by_tenant).
SELECT agent, status, COUNT(*) AS runs, SUM(steps) AS steps, SUM(input_tokens) AS input_tokens,
  SUM(output_tokens) AS output_tokens, SUM(cost_usd) AS cost_usd,
  MIN(CASE WHEN status = 'queued' THEN claim_after END) AS oldest_claimable_at,
  MIN(waiting_since) AS oldest_waiting_since
FROM runs
WHERE tenant_id = :tenant_id
GROUP BY agent, status
ORDER BY agent, status
