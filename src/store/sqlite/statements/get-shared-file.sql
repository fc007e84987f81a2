-- A shared file's latest version (:with_content 1: with its content; 0: without reading the blob).
-- Params: :root_run_id, :path, :with_content. Returns path, version, size, sha256, written_by_run, written_at,
-- content (bytes or null), or nothing.
SELECT f.path, f.version, f.size, f.sha256, f.written_by_run, f.written_at,
  CASE WHEN :with_content = 1 THEN (SELECT a.content FROM artifacts a WHERE a.sha256 = f.sha256) END AS content
FROM shared_files f
WHERE f.root_run_id = :root_run_id AND f.path = :path
ORDER BY f.version DESC
LIMIT 1
