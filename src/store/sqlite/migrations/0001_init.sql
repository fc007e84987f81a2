-- 0001: tenants, keys, runs, journal, events, inputs, audit.
-- Times are integer milliseconds since the epoch; JSON columns hold text.

CREATE TABLE tenants (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
  key_hash    TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants(id),
  created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE runs (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL,
  agent            TEXT NOT NULL,
  agent_version    TEXT NOT NULL,
  agent_key        TEXT NOT NULL,            -- agent || '@' || agent_version, what workers announce they serve
  input            TEXT NOT NULL,
  status           TEXT NOT NULL,
  state_version    INTEGER NOT NULL,
  priority         TEXT NOT NULL,
  priority_rank    INTEGER NOT NULL,         -- 0 interactive, 1 batch
  budget           TEXT NOT NULL,
  metadata         TEXT,
  steps            INTEGER NOT NULL DEFAULT 0,
  input_tokens     INTEGER NOT NULL DEFAULT 0,
  output_tokens    INTEGER NOT NULL DEFAULT 0,
  cost_usd         REAL NOT NULL DEFAULT 0,
  result           TEXT,
  error            TEXT,
  outcome          TEXT,
  waiting_reason   TEXT,
  waiting_since    INTEGER,
  wake_at          INTEGER,
  deadline_at      INTEGER,
  parent_run_id    TEXT,
  idempotency_key  TEXT,
  request_hash     TEXT,
  lease_owner      TEXT,
  lease_token      INTEGER NOT NULL DEFAULT 0,
  lease_expires_at INTEGER,
  claim_after      INTEGER,                  -- when the run may be claimed; NULL: not by time alone
  next_event_seq   INTEGER NOT NULL DEFAULT 1,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  ended_at         INTEGER
) STRICT;

CREATE UNIQUE INDEX runs_idempotency ON runs (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX runs_by_tenant ON runs (tenant_id, id);
CREATE INDEX runs_claimable ON runs (priority_rank, claim_after) WHERE claim_after IS NOT NULL;
CREATE INDEX runs_by_lease_owner ON runs (lease_owner) WHERE lease_owner IS NOT NULL;

CREATE TABLE journal (
  run_id        TEXT NOT NULL,
  seq           INTEGER NOT NULL,
  kind          TEXT NOT NULL,
  name          TEXT NOT NULL,
  status        TEXT NOT NULL,
  args          TEXT,
  result        TEXT,
  error         TEXT,
  execution_id  TEXT,
  effect_class  TEXT,
  attempts      INTEGER NOT NULL,
  lease_token   INTEGER NOT NULL,
  queued_at     INTEGER,
  started_at    INTEGER,
  ended_at      INTEGER,
  deadline_at   INTEGER,
  PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE events (
  run_id  TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  type    TEXT NOT NULL,
  at      INTEGER NOT NULL,
  data    TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE inputs (
  run_id    TEXT NOT NULL,
  key       TEXT NOT NULL,
  value     TEXT NOT NULL,
  at        INTEGER NOT NULL,
  consumed  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, key)
) STRICT, WITHOUT ROWID;

-- Writes Keel refused on purpose (stale commits from fenced-off workers), kept for operators.
CREATE TABLE audit (
  id      INTEGER PRIMARY KEY,
  run_id  TEXT NOT NULL,
  at      INTEGER NOT NULL,
  kind    TEXT NOT NULL,
  data    TEXT NOT NULL
) STRICT;
