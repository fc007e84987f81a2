-- Seals a payload whose chunks are all stored; sealing it again touches it (a collection racing a reuse keeps it).
-- Params: :sha256, :size, :media_type, :chunks, :now. Returns nothing.
INSERT INTO payloads (sha256, size, media_type, chunks, created_at) VALUES (:sha256::text, :size::bigint, :media_type::text, :chunks::bigint, :now::bigint)
ON CONFLICT (sha256) DO UPDATE SET created_at = excluded.created_at
