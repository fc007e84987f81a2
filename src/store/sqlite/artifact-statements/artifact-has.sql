-- Params: :sha256. Returns one row if the blob is stored.
SELECT 1 AS present FROM artifacts WHERE sha256 = :sha256
