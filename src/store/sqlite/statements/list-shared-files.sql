-- The latest version of each file of a run tree's shared space whose path starts with :prefix, by path.
-- Params: :root_run_id, :prefix, :limit. Returns path, version, size, sha256, written_by_run, written_at.
SELECT f.path, f.version, f.size, f.sha256, f.written_by_run, f.written_at
FROM shared_files f
WHERE f.root_run_id = :root_run_id
  AND substr(f.path, 1, length(:prefix)) = :prefix
  AND f.version = (SELECT MAX(g.version) FROM shared_files g WHERE g.root_run_id = f.root_run_id AND g.path = f.path)
ORDER BY f.path
LIMIT :limit
