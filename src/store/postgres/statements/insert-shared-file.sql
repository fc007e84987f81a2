-- The compare-and-set of a shared-space write: inserts version :expected + 1 only when the file's latest version is
-- :expected (0: no version yet). Of two writers racing on one expected version, the key lets exactly one in (the
-- second waits for the first's commit, then inserts nothing).
-- Params: :root_run_id, :path, :expected, :tenant_id, :sha256, :size, :written_by_run, :write_id, :now.
-- Returns the changed-row count (0: conflict).
INSERT INTO shared_files
  (root_run_id, path, version, tenant_id, sha256, size, written_by_run, write_id, written_at)
SELECT :root_run_id::text, :path::text, :expected::bigint + 1, :tenant_id::text, :sha256::text, :size::bigint,
  :written_by_run::text, :write_id::text, :now::bigint
WHERE COALESCE(
  (SELECT MAX(version) FROM shared_files WHERE root_run_id = :root_run_id::text AND path = :path::text), 0
) = :expected::bigint
ON CONFLICT DO NOTHING
