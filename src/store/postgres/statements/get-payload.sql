-- A sealed payload's description. Params: :sha256. Returns sha256, size, media_type, chunks, or nothing.
SELECT sha256, size, media_type, chunks FROM payloads WHERE sha256 = :sha256::text
