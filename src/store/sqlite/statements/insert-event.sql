-- Appends one event at a sequence number allocated from runs.next_event_seq in the same transaction.
-- Params: :run_id, :seq, :type, :at, :data. Fails on a duplicate (run_id, seq): that would be a gap-allocation bug.
-- pos: the next position of the tenant-wide order (0038); one writer, so insertion order is commit order. MAX(pos) is
-- one probe of the events_pos index.
INSERT INTO events (run_id, seq, type, at, data, pos)
VALUES (:run_id, :seq, :type, :at, :data, (SELECT COALESCE(MAX(pos), 0) + 1 FROM events))
