-- What a grant decides on, for one pool, counting live holders only: slots held in all (total), by the tenant
-- (tenant_total), by this holder (mine); how many other holders wait for slots (others_wanting) and how many others
-- hold or want any (others_active). Run under the pool's lock. Params: :pool, :tenant_id, :token, :now. One row.
SELECT
  COALESCE(SUM(l.slots), 0) AS total,
  COALESCE(SUM(CASE WHEN l.tenant_id = :tenant_id THEN l.slots ELSE 0 END), 0) AS tenant_total,
  COALESCE(SUM(CASE WHEN l.token = :token THEN l.slots ELSE 0 END), 0) AS mine,
  COUNT(DISTINCT CASE WHEN l.token <> :token AND l.wanted > 0 THEN l.token END) AS others_wanting,
  COUNT(DISTINCT CASE WHEN l.token <> :token AND (l.slots > 0 OR l.wanted > 0) THEN l.token END) AS others_active
FROM pool_slot_leases l JOIN pool_slot_holders h ON h.token = l.token
WHERE l.pool = :pool AND h.expires_at > :now
