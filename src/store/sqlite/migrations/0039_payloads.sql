-- 0039: large payloads (issue 22). A run input, run output, effect argument or result whose JSON is larger than
-- the inline threshold is stored once, content-addressed (the sha256 of its UTF-8 JSON), in bounded chunks, and
-- the journal or run row holds a reference to it. payload_refs says which runs reference which payload: a payload
-- no run references any more is collectable (collectUnreferencedPayloads). Chunks are written before their
-- payload row; a payload row exists only once all its chunks do.
CREATE TABLE payloads (
  sha256     TEXT PRIMARY KEY,
  size       INTEGER NOT NULL,
  media_type TEXT NOT NULL,
  chunks     INTEGER NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE payload_chunks (
  sha256     TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  bytes      BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (sha256, seq)
) STRICT;

CREATE TABLE payload_refs (
  run_id     TEXT NOT NULL,
  sha256     TEXT NOT NULL,
  size       INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, sha256)
) STRICT;

CREATE INDEX payload_refs_by_sha256 ON payload_refs (sha256);
