-- Appends events at consecutive sequence numbers from :first_seq (allocated from runs.next_event_seq in the same
-- transaction). Params: :run_id, :first_seq, :at, :events (JSON array of {type, data} with data as JSON text).
-- Fails on a duplicate (run_id, seq): that would be a gap-allocation bug.
INSERT INTO events (run_id, seq, type, at, data)
SELECT :run_id, :first_seq::bigint + e.ordinality - 1, e.value->>'type', :at::bigint, e.value->>'data'
FROM jsonb_array_elements(:events::jsonb) WITH ORDINALITY AS e(value, ordinality)
