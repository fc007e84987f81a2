-- Stores the value posted for an input key, unless the key has a value already (posted before, or consumed).
-- Params: :run_id, :key, :value, :now. Returns run_id, or no row when the key has a value already.
INSERT INTO inputs (run_id, key, value, at) VALUES (:run_id, :key, :value, :now::bigint)
ON CONFLICT DO NOTHING
RETURNING run_id
