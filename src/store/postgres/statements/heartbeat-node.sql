-- A node reports its load; only a registered node (ready or draining) is refreshed.
-- Params: :id, :load (JSON text), :now. Returns the changed-row count.
UPDATE nodes SET load = :load::text, heartbeat_at = :now::bigint WHERE id = :id::text AND state <> 'pending'
