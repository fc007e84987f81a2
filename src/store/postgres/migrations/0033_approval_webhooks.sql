-- 0033: the approver webhook (issue 20).
-- approval_webhooks: per tenant, where to POST approval notifications, the secret (secret:NAME) that signs them, and
-- whether decisions and expiries are sent too (a new request always is).
CREATE TABLE approval_webhooks (
  tenant_id       TEXT PRIMARY KEY REFERENCES tenants (id),
  url             TEXT NOT NULL,
  secret_ref      TEXT NOT NULL,
  notify_decided  INTEGER NOT NULL,
  notify_expired  INTEGER NOT NULL,
  updated_at      BIGINT NOT NULL
);

-- approval_notifications: the outbox, written in the transaction that files (or decides, or expires) the approval
-- request; at most one row per request and kind (requested, decided, expired), ever. Claimed by a deliverer with a
-- lease and a fencing token; status: pending, delivered, failed (attempts exhausted or the origin left the allowlist).
CREATE TABLE approval_notifications (
  id                TEXT PRIMARY KEY,
  tenant_id         TEXT NOT NULL,
  run_id            TEXT NOT NULL,
  execution_id      TEXT NOT NULL,
  kind              TEXT NOT NULL,
  url               TEXT NOT NULL,
  payload           TEXT NOT NULL,
  status            TEXT NOT NULL DEFAULT 'pending',
  attempts          INTEGER NOT NULL DEFAULT 0,
  next_attempt_at   BIGINT NOT NULL,
  last_error        TEXT,
  delivered_at      BIGINT,
  claim_owner       TEXT,
  claim_token       BIGINT NOT NULL DEFAULT 0,
  claim_expires_at  BIGINT,
  created_at        BIGINT NOT NULL,
  UNIQUE (run_id, execution_id, kind)
);
CREATE INDEX approval_notifications_due ON approval_notifications (next_attempt_at) WHERE status = 'pending';
CREATE INDEX approval_notifications_by_tenant ON approval_notifications (tenant_id, created_at, id);
