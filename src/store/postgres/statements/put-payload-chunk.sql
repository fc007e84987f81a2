-- One chunk of a payload being stored (issue 22); a chunk stored already is touched (so a collection racing the
-- upload keeps it). Params: :sha256, :seq, :bytes, :now. Returns nothing.
INSERT INTO payload_chunks (sha256, seq, bytes, created_at) VALUES (:sha256::text, :seq::bigint, :bytes::bytea, :now::bigint)
ON CONFLICT (sha256, seq) DO UPDATE SET created_at = excluded.created_at
