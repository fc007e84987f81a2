-- Adds a sandbox node (pending) with its token's hash; a name or hash already taken inserts nothing.
-- Params: :id, :name, :token_hash, :state, :now. Returns the id, or nothing when the name or hash is taken.
INSERT INTO nodes (id, name, token_hash, state, created_at) VALUES (:id, :name, :token_hash, :state, :now)
ON CONFLICT DO NOTHING RETURNING id
