-- Appends schedule events in one statement, at sequence numbers reserved by allocate-schedule-event-seqs.sql.
-- Params: :schedule_id, :first_seq, :at, :events (JSON array of { type, data } with data as JSON text).
INSERT INTO schedule_events (schedule_id, seq, type, at, data)
SELECT :schedule_id::text, :first_seq::bigint + e.ordinality - 1, e.value->>'type', :at::bigint, e.value->>'data'
FROM jsonb_array_elements(:events::jsonb) WITH ORDINALITY AS e(value, ordinality)
