-- Appends one event at a sequence number allocated from runs.next_event_seq in the same transaction.
-- Params: :run_id, :seq, :type, :at, :data. Fails on a duplicate (run_id, seq): that would be a gap-allocation bug.
INSERT INTO events (run_id, seq, type, at, data) VALUES (:run_id, :seq, :type, :at, :data)
