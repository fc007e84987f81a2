-- Reserves :count consecutive event sequence numbers for a run.
-- Params: :id, :count. Returns first_seq (the first reserved number).
UPDATE runs SET next_event_seq = next_event_seq + :count WHERE id = :id RETURNING next_event_seq - :count AS first_seq
