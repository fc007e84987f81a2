-- A schedule's fires, newest logical time first, before the cursor time if one is given.
-- Params: :schedule_id, :status (or NULL), :before (or NULL), :limit.
SELECT * FROM schedule_fires
WHERE schedule_id = :schedule_id AND (:status IS NULL OR status = :status) AND (:before IS NULL OR logical_time < :before)
ORDER BY logical_time DESC
LIMIT :limit
