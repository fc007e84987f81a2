-- 0046: sandbox nodes (issue 24): hosts that run sandboxed tool calls for the cluster. A platform admin
-- creates a node (name + token, only the token's SHA-256 kept); `keel node` registers with the token
-- (url, capacity JSON) and heartbeats its load JSON; placers read the rows seen recently.
-- state: pending | ready | draining (src/domain/sandbox-nodes.ts).
CREATE TABLE nodes (
  id            TEXT PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  token_hash    TEXT NOT NULL UNIQUE,
  state         TEXT NOT NULL,
  url           TEXT,
  capacity      TEXT,
  load          TEXT,
  created_at    BIGINT NOT NULL,
  heartbeat_at  BIGINT
);
