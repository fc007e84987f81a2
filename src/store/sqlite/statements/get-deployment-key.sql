-- The deployment key `name`. Params: :name. Returns secret, or nothing when none is stored.
SELECT secret FROM deployment_keys WHERE name = :name
