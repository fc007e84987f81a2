-- The backlog refresh of fair claims without a cluster-wide lock: fair-backlog, for the tenants not yet marked
-- backlogged only (fair_tenant_clocks.backlogged): the loose index scan still finds every tenant with live runs, but
-- the head probes are made only for those not marked, so a refresh while every tenant is backlogged costs one probe
-- per tenant.
-- Params: :now, :served (JSON array of agent@version), :claimable_statuses (JSON array).
-- Returns tenant_id, weight, vtime, max_concurrent_runs, held, head_interactive, head_batch (either head may be NULL).
WITH RECURSIVE live(tenant_id) AS (
  SELECT (SELECT min(tenant_id) FROM runs WHERE claim_after IS NOT NULL)
  UNION ALL
  SELECT (SELECT min(r.tenant_id) FROM runs r WHERE r.claim_after IS NOT NULL AND r.tenant_id > live.tenant_id)
  FROM live WHERE live.tenant_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM fair_tenant_clocks f WHERE f.tenant_id = live.tenant_id AND f.backlogged)
),
heads AS MATERIALIZED (
  SELECT live.tenant_id,
    (SELECT r.claim_after FROM runs r
      WHERE r.tenant_id = live.tenant_id AND r.priority_rank = 0 AND r.claim_after IS NOT NULL AND r.claim_after <= :now::bigint
        AND r.status = ANY (ARRAY(SELECT jsonb_array_elements_text(:claimable_statuses::jsonb)))
        AND r.agent_key = ANY (ARRAY(SELECT jsonb_array_elements_text(:served::jsonb)))
        AND r.lease_losses = 0 AND r.lease_owner IS NULL
      ORDER BY r.claim_after LIMIT 1) AS head_interactive,
    (SELECT r.claim_after FROM runs r
      WHERE r.tenant_id = live.tenant_id AND r.priority_rank = 1 AND r.claim_after IS NOT NULL AND r.claim_after <= :now::bigint
        AND r.status = ANY (ARRAY(SELECT jsonb_array_elements_text(:claimable_statuses::jsonb)))
        AND r.agent_key = ANY (ARRAY(SELECT jsonb_array_elements_text(:served::jsonb)))
        AND r.lease_losses = 0 AND r.lease_owner IS NULL
      ORDER BY r.claim_after LIMIT 1) AS head_batch
  FROM live WHERE live.tenant_id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM fair_tenant_clocks f WHERE f.tenant_id = live.tenant_id AND f.backlogged)
)
SELECT h.tenant_id, coalesce(t.weight, 1) AS weight, coalesce(c.vtime, 0) AS vtime, t.max_concurrent_runs,
  CASE WHEN t.max_concurrent_runs IS NULL THEN 0 ELSE (
    SELECT count(*) FROM runs x
    WHERE x.tenant_id = h.tenant_id AND x.ended_at IS NULL AND x.status IN ('running', 'cancelling') AND x.lease_owner IS NOT NULL
  ) END AS held,
  h.head_interactive, h.head_batch
FROM heads h
LEFT JOIN tenants t ON t.id = h.tenant_id
LEFT JOIN fair_tenant_clocks c ON c.tenant_id = h.tenant_id
WHERE h.head_interactive IS NOT NULL OR h.head_batch IS NOT NULL
