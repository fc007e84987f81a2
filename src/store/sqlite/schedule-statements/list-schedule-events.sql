-- A schedule's events after a sequence number, oldest first.
-- Params: :schedule_id, :after_seq, :limit.
SELECT * FROM schedule_events WHERE schedule_id = :schedule_id AND seq > :after_seq ORDER BY seq LIMIT :limit
