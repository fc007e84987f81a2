-- Deletes the payloads no run references, sealed or touched before :before. Params: :before. Returns sha256.
DELETE FROM payloads WHERE created_at < :before::bigint
AND NOT EXISTS (SELECT 1 FROM payload_refs r WHERE r.sha256 = payloads.sha256) RETURNING sha256
