-- 0023: tool policy and human approval (issue 20).
-- tool_policies: one tool policy per tenant (a JSON document, see src/domain/tool-policy.ts).
CREATE TABLE tool_policies (
  tenant_id   TEXT PRIMARY KEY REFERENCES tenants (id),
  policy      TEXT NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;

-- approvals: one request for a human decision per proposed tool call (run, execution id), bound to the call's
-- canonical arguments by args_hash. status: pending, approved, denied, expired; only a pending row changes.
CREATE TABLE approvals (
  run_id        TEXT NOT NULL REFERENCES runs (id),
  execution_id  TEXT NOT NULL,
  tenant_id     TEXT NOT NULL,
  agent         TEXT NOT NULL,
  seq           INTEGER NOT NULL,
  tool          TEXT NOT NULL,
  args          TEXT NOT NULL,
  args_hash     TEXT NOT NULL,
  risk          TEXT NOT NULL,
  rule          TEXT NOT NULL,
  reason        TEXT NOT NULL,
  status        TEXT NOT NULL DEFAULT 'pending',
  requested_at  INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  decided_by    TEXT,
  decided_at    INTEGER,
  note          TEXT,
  PRIMARY KEY (run_id, execution_id)
) STRICT;
CREATE INDEX approvals_by_tenant ON approvals (tenant_id, status, requested_at, execution_id);
