-- One secret of the tenant, sealed. Params: :tenant_id, :name. Returns s.tenant_id, s.name, s.version, s.key_provider, s.key_id, s.wrapped_key, s.sealed, s.created_at, s.updated_at, or nothing.
SELECT s.tenant_id, s.name, s.version, s.key_provider, s.key_id, s.wrapped_key, s.sealed, s.created_at, s.updated_at FROM secrets s WHERE s.tenant_id = :tenant_id AND s.name = :name
