-- A backlog refresh of fair claims without a cluster-wide lock: marks backlogged the tenants a fair-backlog read found
-- with claimable runs and room. A tenant that was not backlogged restarts at the clock (the least virtual time of the
-- backlogged tenants, else fair_clock), so idling banks no credit. It never waits for a claimer: rows a claim holds
-- are skipped (that claim is serving them), new rows are inserted in tenant order, and fair_clock is advanced only if
-- no other refresh holds it.
-- Params: :tenants (JSON array of tenant ids). Returns nothing.
WITH found AS (
  SELECT value AS tenant_id FROM jsonb_array_elements_text(:tenants::jsonb)
),
clock AS (
  SELECT coalesce((SELECT min(vtime) FROM fair_tenant_clocks WHERE backlogged), (SELECT vtime FROM fair_clock WHERE id = 1), 0) AS vtime
),
advanced AS (
  UPDATE fair_clock SET vtime = clock.vtime FROM clock
  WHERE fair_clock.id IN (SELECT id FROM fair_clock WHERE id = 1 AND vtime < (SELECT vtime FROM clock) FOR UPDATE SKIP LOCKED)
),
fresh AS (
  INSERT INTO fair_tenant_clocks (tenant_id, vtime, backlogged)
  SELECT f.tenant_id, clock.vtime, true FROM found f CROSS JOIN clock
  WHERE NOT EXISTS (SELECT 1 FROM fair_tenant_clocks c WHERE c.tenant_id = f.tenant_id)
  ORDER BY f.tenant_id
  ON CONFLICT (tenant_id) DO NOTHING
)
UPDATE fair_tenant_clocks c SET backlogged = true, vtime = greatest(c.vtime, clock.vtime)
FROM clock
WHERE c.tenant_id IN (
  SELECT u.tenant_id FROM fair_tenant_clocks u
  WHERE u.tenant_id IN (SELECT tenant_id FROM found) AND NOT u.backlogged
  FOR UPDATE SKIP LOCKED
)
