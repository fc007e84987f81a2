-- Bytes of the payloads a run references, other than one. Params: :run_id, :sha256. Returns bytes.
SELECT COALESCE(SUM(size), 0) AS bytes FROM payload_refs WHERE run_id = :run_id AND sha256 <> :sha256
