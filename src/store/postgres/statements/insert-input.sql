-- Stores the value posted for an input key. Params: :run_id, :key, :value, :now. Fails if the key has a value already.
INSERT INTO inputs (run_id, key, value, at) VALUES (:run_id, :key, :value, :now)
