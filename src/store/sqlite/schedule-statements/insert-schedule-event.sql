-- Appends one schedule event at a sequence number reserved by allocate-schedule-event-seqs.sql.
-- Params: :schedule_id, :seq, :type, :at, :data.
INSERT INTO schedule_events (schedule_id, seq, type, at, data) VALUES (:schedule_id, :seq, :type, :at, :data)
