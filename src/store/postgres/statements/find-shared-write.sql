-- The version a shared-space write already made (a write applied again after a crash).
-- Params: :root_run_id, :write_id. Returns version, or nothing.
SELECT version FROM shared_files WHERE root_run_id = :root_run_id AND write_id = :write_id
