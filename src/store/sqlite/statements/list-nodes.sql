-- Every sandbox node, by name.
-- Params: none. Returns id, name, token_hash, state, url, capacity, load, created_at, heartbeat_at.
SELECT id, name, token_hash, state, url, capacity, load, created_at, heartbeat_at FROM nodes ORDER BY name
