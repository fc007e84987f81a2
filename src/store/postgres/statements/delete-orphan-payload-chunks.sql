-- Deletes chunks of no sealed payload (collected, or an upload that never finished), written or touched before
-- :before. Params: :before. Returns nothing.
DELETE FROM payload_chunks WHERE created_at < :before::bigint
AND NOT EXISTS (SELECT 1 FROM payloads p WHERE p.sha256 = payload_chunks.sha256)
