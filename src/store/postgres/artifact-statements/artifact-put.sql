-- Params: :sha256, :size, :content, :created_at. Stores a blob once; a second put of the same content is a no-op.
INSERT INTO artifacts (sha256, size, content, created_at) VALUES (:sha256, :size, :content, :created_at)
ON CONFLICT (sha256) DO NOTHING
