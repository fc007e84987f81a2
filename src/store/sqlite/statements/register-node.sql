-- A node announces where it takes calls and what it offers; its heartbeat time is now.
-- Params: :id, :state, :url, :capacity (JSON text), :now. Returns the changed-row count.
UPDATE nodes SET state = :state, url = :url, capacity = :capacity, load = NULL, heartbeat_at = :now WHERE id = :id
