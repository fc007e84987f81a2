-- Reserves :count event sequence numbers of a schedule (inside the transaction that appends them).
-- Params: :id, :count. Result: first_seq.
UPDATE schedules SET next_event_seq = next_event_seq + :count
WHERE id = :id
RETURNING next_event_seq - :count AS first_seq
