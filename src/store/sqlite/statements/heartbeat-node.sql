-- A node reports its load; only a registered node (ready or draining) is refreshed.
-- Params: :id, :load (JSON text), :now. Returns the changed-row count.
UPDATE nodes SET load = :load, heartbeat_at = :now WHERE id = :id AND state <> 'pending'
