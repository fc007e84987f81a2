-- A page of a tenant's runs, newest first (ids are time-ordered), after the cursor id if one is given.
-- Params: :tenant_id, :status (or NULL), :agent (or NULL), :code (error code, or NULL), :after_id (or NULL), :limit,
-- :rerun_of (or NULL: only the reruns of that run).
SELECT * FROM runs
WHERE tenant_id = :tenant_id
  AND (:status IS NULL OR status = :status)
  AND (:agent IS NULL OR agent = :agent)
  AND (:code IS NULL OR json_extract(error, '$.code') = :code)
  AND (:after_id IS NULL OR id < :after_id)
  AND (:rerun_of IS NULL OR rerun_of = :rerun_of)
ORDER BY id DESC
LIMIT :limit
