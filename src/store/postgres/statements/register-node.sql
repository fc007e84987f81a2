-- A node announces where it takes calls and what it offers; its heartbeat time is now.
-- Params: :id, :state, :url, :capacity (JSON text), :now. Returns the changed-row count.
UPDATE nodes SET state = :state::text, url = :url::text, capacity = :capacity::text, load = NULL, heartbeat_at = :now::bigint
WHERE id = :id::text
