-- Params: :sha256. Returns content, or nothing.
SELECT content FROM artifacts WHERE sha256 = :sha256
