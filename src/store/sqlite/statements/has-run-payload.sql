-- Whether a run references a payload. Params: :run_id, :sha256. Returns one row, or nothing.
SELECT 1 AS present FROM payload_refs WHERE run_id = :run_id AND sha256 = :sha256
