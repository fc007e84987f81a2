-- Adds a named platform admin with its key's hash; a name or hash already taken inserts nothing.
-- Params: :id, :name, :key_hash, :now. Returns the id, or nothing when the name or hash is taken.
INSERT INTO admin_principals (id, name, key_hash, created_at) VALUES (:id, :name, :key_hash, :now)
ON CONFLICT DO NOTHING RETURNING id
