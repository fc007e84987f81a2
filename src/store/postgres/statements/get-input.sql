-- Params: :run_id, :key. Returns value (JSON text) and consumed, or nothing.
SELECT value, consumed FROM inputs WHERE run_id = :run_id AND key = :key
