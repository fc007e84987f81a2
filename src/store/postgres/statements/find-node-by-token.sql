-- The sandbox node a token's hash belongs to (how `keel node` authenticates).
-- Params: :token_hash. Returns id, name, token_hash, state, url, capacity, load, created_at, heartbeat_at.
SELECT id, name, token_hash, state, url, capacity, load, created_at, heartbeat_at FROM nodes WHERE token_hash = :token_hash::text
