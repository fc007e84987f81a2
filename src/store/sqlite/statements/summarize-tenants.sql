-- Every tenant with its runs grouped by status (one row per tenant and status; a tenant without runs has one row
-- with status NULL and zero counts). Params: none. Result: tenant_id, tenant_name, tenant_created_at, status, runs,
-- steps, input_tokens, output_tokens, cost_usd, oldest_claimable_at (queued only, or NULL).
-- Scans all runs: for the operator's dashboard, not for hot paths.
SELECT t.id AS tenant_id, t.name AS tenant_name, t.created_at AS tenant_created_at, r.status AS status,
  COUNT(r.id) AS runs, COALESCE(SUM(r.steps), 0) AS steps, COALESCE(SUM(r.input_tokens), 0) AS input_tokens,
  COALESCE(SUM(r.output_tokens), 0) AS output_tokens, COALESCE(SUM(r.cost_usd), 0) AS cost_usd,
  MIN(CASE WHEN r.status = 'queued' THEN r.claim_after END) AS oldest_claimable_at
FROM tenants t
LEFT JOIN runs r ON r.tenant_id = t.id
GROUP BY t.id, t.name, t.created_at, r.status
ORDER BY t.name, r.status
