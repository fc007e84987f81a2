-- Stores a shared file's content as a content-addressed artifact (a blob already there is kept).
-- Params: :sha256, :size, :content_hex (the bytes in hex), :now. Returns the changed-row count.
INSERT INTO artifacts (sha256, size, content, created_at)
VALUES (:sha256, :size, decode(:content_hex::text, 'hex'), :now)
ON CONFLICT (sha256) DO NOTHING
