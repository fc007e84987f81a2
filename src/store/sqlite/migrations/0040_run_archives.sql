-- Retention and archival (issue 22): a terminal run's journal and events are copied, in gzip chunks, to the artifact
-- store, then removed from the live tables. run_archives holds one row per run being (or done being) archived: the
-- positions it must cover, its contiguous watermarks (every position up to it is in a recorded, verified chunk), the
-- snapshot written before any removal, and the archiver's claim. run_archive_chunks records every stored chunk with
-- its position range; a watermark is always derived from these rows, never from "the last chunk received".
CREATE TABLE run_archives (
  run_id            TEXT PRIMARY KEY,
  tenant_id         TEXT NOT NULL,
  journal_last      INTEGER NOT NULL DEFAULT -1,
  events_last       INTEGER NOT NULL DEFAULT -1,
  journal_watermark INTEGER NOT NULL DEFAULT -1,
  events_watermark  INTEGER NOT NULL DEFAULT -1,
  snapshot_sha256   TEXT,
  claim_owner       TEXT,
  claim_token       INTEGER NOT NULL DEFAULT 0,
  claim_expires_at  INTEGER,
  journal_pruned    INTEGER NOT NULL DEFAULT 0,
  events_pruned     INTEGER NOT NULL DEFAULT 0,
  created_at        INTEGER NOT NULL,
  pruned_at         INTEGER
) STRICT;

CREATE INDEX run_archives_by_tenant ON run_archives (tenant_id);

CREATE TABLE run_archive_chunks (
  run_id     TEXT NOT NULL,
  stream     TEXT NOT NULL,
  first_seq  INTEGER NOT NULL,
  last_seq   INTEGER NOT NULL,
  sha256     TEXT NOT NULL,
  bytes      INTEGER NOT NULL,
  records    INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, stream, first_seq)
) STRICT, WITHOUT ROWID;

-- Per-tenant retention overrides; a tenant without a row follows the platform default.
CREATE TABLE tenant_retention (
  tenant_id  TEXT PRIMARY KEY,
  keep_days  INTEGER,
  keep_runs  INTEGER,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX runs_ended_by_tenant ON runs (tenant_id, ended_at) WHERE ended_at IS NOT NULL;
