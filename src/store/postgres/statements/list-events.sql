-- Params: :run_id, :after_seq, :limit. Returns events with seq > :after_seq in order.
SELECT * FROM events WHERE run_id = :run_id AND seq > :after_seq ORDER BY seq LIMIT :limit
