-- 0032: per-run delegated tokens (issue 20): the deployment's own signing keys, by name (`delegation`). The first
-- process that needs a key writes it (insert if absent); every other process on the same store reads that one, so a
-- token minted by one process verifies on all. Unused when the key is configured (KEEL_DELEGATION_KEY).
CREATE TABLE deployment_keys (
  name        TEXT PRIMARY KEY,
  secret      TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
