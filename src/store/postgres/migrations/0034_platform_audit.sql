-- 0034: the platform audit log (issue 20): every state-changing request of a platform admin (tenants, quotas, tenant
-- keys, policies, MCP servers, allowlists, admin principals), admitted or refused: who (actor_type admin, actor_id
-- the principal's id or NULL for the root key KEEL_ADMIN_KEY, actor_name), what (kind), on what (resource), which
-- tenant it concerned (tenant_id, NULL for platform-wide actions), when (at), the outcome (ok or an error code), data.
-- Append-only; pruned by the audit retention like the tenants' logs.
CREATE TABLE platform_audit (
  id          BIGSERIAL PRIMARY KEY,
  at          BIGINT NOT NULL,
  kind        TEXT NOT NULL,
  resource    TEXT,
  tenant_id   TEXT,
  actor_type  TEXT NOT NULL,
  actor_id    TEXT,
  actor_name  TEXT,
  outcome     TEXT NOT NULL,
  data        TEXT NOT NULL
);
CREATE INDEX platform_audit_by_time ON platform_audit (at);
CREATE INDEX platform_audit_by_tenant ON platform_audit (tenant_id, id);
