-- Stores the deployment key `name` unless one is stored already (the first writer wins).
-- Params: :name, :secret, :now. Returns nothing.
INSERT INTO deployment_keys (name, secret, created_at) VALUES (:name, :secret, :now)
ON CONFLICT (name) DO NOTHING
