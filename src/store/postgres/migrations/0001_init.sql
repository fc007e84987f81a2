-- 0001: tenants, keys, runs, journal, events, inputs, audit (the same model as the SQLite store).
-- Times are integer milliseconds since the epoch; JSON columns hold text, so both stores map rows the same way.

CREATE TABLE tenants (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  created_at  BIGINT NOT NULL
);

CREATE TABLE api_keys (
  key_hash    TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants(id),
  created_at  BIGINT NOT NULL
);

CREATE TABLE runs (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL,
  agent            TEXT NOT NULL,
  agent_version    TEXT NOT NULL,
  agent_key        TEXT NOT NULL,
  input            TEXT NOT NULL,
  status           TEXT NOT NULL,
  state_version    BIGINT NOT NULL,
  priority         TEXT NOT NULL,
  priority_rank    INTEGER NOT NULL,
  budget           TEXT NOT NULL,
  metadata         TEXT,
  steps            BIGINT NOT NULL DEFAULT 0,
  input_tokens     BIGINT NOT NULL DEFAULT 0,
  output_tokens    BIGINT NOT NULL DEFAULT 0,
  cost_usd         DOUBLE PRECISION NOT NULL DEFAULT 0,
  result           TEXT,
  error            TEXT,
  outcome          TEXT,
  waiting_reason   TEXT,
  waiting_since    BIGINT,
  wake_at          BIGINT,
  deadline_at      BIGINT,
  parent_run_id    TEXT,
  idempotency_key  TEXT,
  request_hash     TEXT,
  lease_owner      TEXT,
  lease_token      BIGINT NOT NULL DEFAULT 0,
  lease_expires_at BIGINT,
  claim_after      BIGINT,
  next_event_seq   BIGINT NOT NULL DEFAULT 1,
  created_at       BIGINT NOT NULL,
  updated_at       BIGINT NOT NULL,
  ended_at         BIGINT
);

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
  lease_token   BIGINT NOT NULL,
  queued_at     BIGINT,
  started_at    BIGINT,
  ended_at      BIGINT,
  deadline_at   BIGINT,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE events (
  run_id  TEXT NOT NULL,
  seq     BIGINT NOT NULL,
  type    TEXT NOT NULL,
  at      BIGINT NOT NULL,
  data    TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE inputs (
  run_id    TEXT NOT NULL,
  key       TEXT NOT NULL,
  value     TEXT NOT NULL,
  at        BIGINT NOT NULL,
  consumed  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, key)
);

CREATE TABLE audit (
  id      BIGSERIAL PRIMARY KEY,
  run_id  TEXT NOT NULL,
  at      BIGINT NOT NULL,
  kind    TEXT NOT NULL,
  data    TEXT NOT NULL
);
