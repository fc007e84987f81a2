-- A page of the platform audit log, newest first, after the cursor :before_id (NULL: from the newest), filtered by
-- action (:kind), resource, tenant, actor id and time (:since inclusive, :until exclusive; NULL: no bound).
-- Params: :kind, :resource, :tenant_id, :actor_id, :since, :until, :before_id, :limit. Returns the rows.
SELECT id, at, kind, resource, tenant_id, actor_type, actor_id, actor_name, outcome, data FROM platform_audit
WHERE (:kind IS NULL OR kind = :kind)
  AND (:resource IS NULL OR resource = :resource)
  AND (:tenant_id IS NULL OR tenant_id = :tenant_id)
  AND (:actor_id IS NULL OR actor_id = :actor_id)
  AND (:since IS NULL OR at >= :since)
  AND (:until IS NULL OR at < :until)
  AND (:before_id IS NULL OR id < :before_id)
ORDER BY id DESC LIMIT :limit
