-- Replaces the secret's sealed value (a new data key) if its version is still :version, and bumps the version.
-- Params: :tenant_id, :name, :version, :key_provider, :key_id, :wrapped_key, :sealed, :now. Returns version, or
-- nothing (no such secret, or rotated meanwhile).
UPDATE secrets SET version = version + 1, key_provider = :key_provider::text, key_id = :key_id::text,
  wrapped_key = :wrapped_key::text, sealed = :sealed::text, updated_at = :now::bigint
WHERE tenant_id = :tenant_id AND name = :name AND version = :version::integer RETURNING version
