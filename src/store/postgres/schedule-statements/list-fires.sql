-- A schedule's fires, newest logical time first, before the cursor time if one is given.
-- Params: :schedule_id, :status (or NULL), :before (or NULL), :limit.
SELECT * FROM schedule_fires
WHERE schedule_id = :schedule_id::text AND (:status::text IS NULL OR status = :status::text) AND (:before::bigint IS NULL OR logical_time < :before::bigint)
ORDER BY logical_time DESC
LIMIT :limit::int
