-- A page of a tenant's runs, newest first (ids are time-ordered), after the cursor id if one is given.
-- Params: :tenant_id, :status (or NULL), :agent (or NULL), :code (error code, or NULL), :after_id (or NULL), :limit,
-- :rerun_of (or NULL: only the reruns of that run).
SELECT * FROM runs
WHERE tenant_id = :tenant_id
  AND (:status::text IS NULL OR status = :status::text)
  AND (:agent::text IS NULL OR agent = :agent::text)
  AND (:code::text IS NULL OR error::jsonb->>'code' = :code::text)
  AND (:after_id::text IS NULL OR id < :after_id::text)
  AND (:rerun_of::text IS NULL OR rerun_of = :rerun_of::text)
ORDER BY id DESC
LIMIT :limit::int
