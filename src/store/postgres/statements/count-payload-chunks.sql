-- How many chunks of a payload are stored. Params: :sha256. Returns n.
SELECT COUNT(*) AS n FROM payload_chunks WHERE sha256 = :sha256::text
