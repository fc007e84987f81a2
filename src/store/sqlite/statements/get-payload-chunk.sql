-- One chunk of a payload. Params: :sha256, :seq. Returns bytes, or nothing.
SELECT bytes FROM payload_chunks WHERE sha256 = :sha256 AND seq = :seq
