-- A page of the platform audit log, newest first, after the cursor :before_id (NULL: from the newest), filtered by
-- action (:kind), resource, tenant, actor id and time (:since inclusive, :until exclusive; NULL: no bound).
-- Params: :kind, :resource, :tenant_id, :actor_id, :since, :until, :before_id, :limit. Returns the rows.
SELECT id, at, kind, resource, tenant_id, actor_type, actor_id, actor_name, outcome, data FROM platform_audit
WHERE (:kind::text IS NULL OR kind = :kind::text)
  AND (:resource::text IS NULL OR resource = :resource::text)
  AND (:tenant_id::text IS NULL OR tenant_id = :tenant_id::text)
  AND (:actor_id::text IS NULL OR actor_id = :actor_id::text)
  AND (:since::bigint IS NULL OR at >= :since::bigint)
  AND (:until::bigint IS NULL OR at < :until::bigint)
  AND (:before_id::bigint IS NULL OR id < :before_id::bigint)
ORDER BY id DESC LIMIT :limit::int
