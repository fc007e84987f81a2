-- Artifact store (issue 6): content-addressed blobs (workspace files and manifests) and named references to them
-- (a run's latest workspace manifest). A blob's key is the sha256 of its content; rows are never updated.
CREATE TABLE artifacts (
  sha256 TEXT PRIMARY KEY,
  size BIGINT NOT NULL,
  content BYTEA NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE artifact_refs (
  name TEXT PRIMARY KEY,
  sha256 TEXT NOT NULL REFERENCES artifacts (sha256),
  updated_at BIGINT NOT NULL
);
