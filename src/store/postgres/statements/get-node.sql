-- One sandbox node by id.
-- Params: :id. Returns id, name, token_hash, state, url, capacity, load (JSON text), created_at, heartbeat_at.
SELECT id, name, token_hash, state, url, capacity, load, created_at, heartbeat_at FROM nodes WHERE id = :id::text
