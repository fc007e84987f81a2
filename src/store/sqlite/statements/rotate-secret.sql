-- Replaces the secret's sealed value (a new data key) if its version is still :version, and bumps the version.
-- Params: :tenant_id, :name, :version, :key_provider, :key_id, :wrapped_key, :sealed, :now. Returns version, or
-- nothing (no such secret, or rotated meanwhile).
UPDATE secrets SET version = version + 1, key_provider = :key_provider, key_id = :key_id,
  wrapped_key = :wrapped_key, sealed = :sealed, updated_at = :now
WHERE tenant_id = :tenant_id AND name = :name AND version = :version RETURNING version
