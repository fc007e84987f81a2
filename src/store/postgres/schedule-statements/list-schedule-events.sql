-- A schedule's events after a sequence number, oldest first.
-- Params: :schedule_id, :after_seq, :limit.
SELECT * FROM schedule_events WHERE schedule_id = :schedule_id::text AND seq > :after_seq::bigint ORDER BY seq LIMIT :limit::int
