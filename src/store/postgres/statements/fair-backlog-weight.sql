-- The total weight of the tenants marked backlogged (fair claims without a cluster-wide lock): the interactive lead is a
-- share of it. Params: none. Returns weight.
SELECT coalesce(sum(coalesce(t.weight, 1)), 0) AS weight
FROM fair_tenant_clocks c LEFT JOIN tenants t ON t.id = c.tenant_id
WHERE c.backlogged
