-- Records that a run references a payload (once per run and payload). Params: :run_id, :sha256, :size, :now.
-- Returns nothing.
INSERT INTO payload_refs (run_id, sha256, size, created_at) VALUES (:run_id, :sha256, :size, :now)
ON CONFLICT (run_id, sha256) DO UPDATE SET created_at = excluded.created_at
