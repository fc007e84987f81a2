-- Artifact store (issue 6): content-addressed blobs (workspace files and manifests) and named references to them
-- (a run's latest workspace manifest). A blob's key is the sha256 of its content; rows are never updated.
CREATE TABLE artifacts (
  sha256 TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  content BLOB NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE artifact_refs (
  name TEXT PRIMARY KEY,
  sha256 TEXT NOT NULL REFERENCES artifacts (sha256),
  updated_at INTEGER NOT NULL
) STRICT;
