-- 0021: several named, scoped API keys per tenant (issue 20), and the audit table as the tenant's audit log.
-- api_keys: each key gets an id (key_...), a name, its scopes (JSON array of submit, read, operate, admin), an
-- optional expiry, the time it was last used (written at most once a minute per key per process) and a revocation
-- time. Keys made before this migration keep working with every scope, named 'default'.
ALTER TABLE api_keys ADD COLUMN id TEXT;
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT 'default';
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT '["submit","read","operate","admin"]';
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
ALTER TABLE api_keys ADD COLUMN revoked_at INTEGER;
UPDATE api_keys SET id = 'key_' || lower(hex(randomblob(16))) WHERE id IS NULL;
CREATE UNIQUE INDEX api_keys_id ON api_keys (id);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at);

-- audit: append-only, per tenant. Who (actor_type key|admin|system, actor_id, actor_name), what (kind: the action),
-- on what (resource, e.g. run:run_..., key:key_..., tenant:ten_...), when (at), outcome (ok or an error code), and
-- data (JSON). run_id stays for the records about one run; it is no longer required. Old records get their run's
-- tenant. SQLite cannot drop a NOT NULL in place: the table is rebuilt.
CREATE TABLE audit_new (
  id          INTEGER PRIMARY KEY,
  tenant_id   TEXT,
  run_id      TEXT,
  at          INTEGER NOT NULL,
  kind        TEXT NOT NULL,
  resource    TEXT,
  actor_type  TEXT NOT NULL DEFAULT 'system',
  actor_id    TEXT,
  actor_name  TEXT,
  outcome     TEXT NOT NULL DEFAULT 'ok',
  data        TEXT NOT NULL
) STRICT;
INSERT INTO audit_new (id, tenant_id, run_id, at, kind, resource, data)
SELECT a.id, (SELECT r.tenant_id FROM runs r WHERE r.id = a.run_id), a.run_id, a.at, a.kind, 'run:' || a.run_id, a.data
FROM audit a;
DROP TABLE audit;
ALTER TABLE audit_new RENAME TO audit;
CREATE INDEX audit_by_tenant ON audit (tenant_id, id);
CREATE INDEX audit_by_time ON audit (at);
