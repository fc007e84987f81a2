-- Stores a new secret of the tenant at version 1 (sealed value, wrapped data key); a name the tenant has already is
-- left as it is. Params: :tenant_id, :name, :key_provider, :key_id, :wrapped_key, :sealed, :now. Returns name, or nothing.
INSERT INTO secrets (tenant_id, name, version, key_provider, key_id, wrapped_key, sealed, created_at, updated_at)
VALUES (:tenant_id::text, :name::text, 1, :key_provider::text, :key_id::text, :wrapped_key::text, :sealed::text, :now::bigint, :now::bigint)
ON CONFLICT (tenant_id, name) DO NOTHING RETURNING name
