-- A page of the tenant's audit log, newest first, after the cursor :before_id (NULL: from the newest), filtered
-- by action (:kind), resource, and time (:since inclusive, :until exclusive; NULL: no bound).
-- Params: :tenant_id, :kind, :resource, :since, :until, :before_id, :limit. Returns id, tenant_id, run_id, at, kind, resource, actor_type, actor_id, actor_name, outcome, data.
SELECT id, tenant_id, run_id, at, kind, resource, actor_type, actor_id, actor_name, outcome, data FROM audit
WHERE tenant_id = :tenant_id::text
  AND (:kind::text IS NULL OR kind = :kind::text)
  AND (:resource::text IS NULL OR resource = :resource::text)
  AND (:since::bigint IS NULL OR at >= :since::bigint)
  AND (:until::bigint IS NULL OR at < :until::bigint)
  AND (:before_id::bigint IS NULL OR id < :before_id::bigint)
ORDER BY id DESC LIMIT :limit::int
