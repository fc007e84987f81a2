-- A schedule's notifications, oldest first.
-- Params: :schedule_id.
SELECT * FROM schedule_notifications WHERE schedule_id = :schedule_id::text ORDER BY created_at, id
