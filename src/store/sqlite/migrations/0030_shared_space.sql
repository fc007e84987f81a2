-- 0030: the shared space of a run tree (issue 21). One row per version of a file: (root_run_id, path, version) is
-- the key, so of two writers that expect the same version exactly one inserts the next. Content lives in the
-- content-addressed artifacts table (0004). write_id (`<runId>.<seq>`) makes a write that is applied again after a
-- crash return its first version instead of a conflict. Rows are never updated.
CREATE TABLE shared_files (
  root_run_id     TEXT NOT NULL,
  path            TEXT NOT NULL,
  version         INTEGER NOT NULL,
  tenant_id       TEXT NOT NULL,
  sha256          TEXT NOT NULL REFERENCES artifacts (sha256),
  size            INTEGER NOT NULL,
  written_by_run  TEXT NOT NULL,
  write_id        TEXT NOT NULL,
  written_at      INTEGER NOT NULL,
  PRIMARY KEY (root_run_id, path, version)
) STRICT;
CREATE UNIQUE INDEX shared_files_write_id ON shared_files (root_run_id, write_id);
