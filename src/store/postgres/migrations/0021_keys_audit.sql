-- 0021: several named, scoped API keys per tenant (issue 20), and the audit table as the tenant's audit log.
-- api_keys: each key gets an id (key_...), a name, its scopes (JSON array of submit, read, operate, admin), an
-- optional expiry, the time it was last used (written at most once a minute per key per process) and a revocation
-- time. Keys made before this migration keep working with every scope, named 'default'.
ALTER TABLE api_keys ADD COLUMN id TEXT;
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT 'default';
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '["submit","read","operate","admin"]';
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
ALTER TABLE api_keys ADD COLUMN revoked_at BIGINT;
UPDATE api_keys SET id = 'key_' || md5(key_hash || random()::text) WHERE id IS NULL;
CREATE UNIQUE INDEX api_keys_id ON api_keys (id);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at);

-- audit: append-only, per tenant. Who (actor_type key|admin|system, actor_id, actor_name), what (kind: the action),
-- on what (resource, e.g. run:run_..., key:key_..., tenant:ten_...), when (at), outcome (ok or an error code), and
-- data (JSON). run_id stays for the records about one run; it is no longer required. Old records get their run's
-- tenant.
ALTER TABLE audit ALTER COLUMN run_id DROP NOT NULL;
ALTER TABLE audit ADD COLUMN tenant_id TEXT;
ALTER TABLE audit ADD COLUMN resource TEXT;
ALTER TABLE audit ADD COLUMN actor_type TEXT NOT NULL DEFAULT 'system';
ALTER TABLE audit ADD COLUMN actor_id TEXT;
ALTER TABLE audit ADD COLUMN actor_name TEXT;
ALTER TABLE audit ADD COLUMN outcome TEXT NOT NULL DEFAULT 'ok';
UPDATE audit a SET tenant_id = r.tenant_id, resource = 'run:' || a.run_id FROM runs r WHERE r.id = a.run_id;
CREATE INDEX audit_by_tenant ON audit (tenant_id, id);
CREATE INDEX audit_by_time ON audit (at);
