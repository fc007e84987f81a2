-- 0044: pool limits across processes (issue 24). A process leases slots of an effect pool from the database, per
-- tenant and in blocks, so a pool's limit and its per-tenant caps hold over every process on the database, not per
-- process. A holder is one process incarnation: its fencing `token` (from pool_slot_fence, never reused) and its
-- `expires_at` (ms), renewed with its heartbeat; its slots count only while it is unexpired, so a lost process's
-- slots come back at its expiry, and a late return or renewal under a lost token matches nothing. Slot rows: per
-- (pool, tenant, token) the `slots` held and the `wanted` more that holder waits for (read by the others to give back
-- surplus). Grants lock the pool (advisory lock on its name) and are refused past the limit or the tenant's cap in
-- the same transaction (procedures/pool-slots.ts).
CREATE TABLE pool_slot_holders (
  token       INTEGER PRIMARY KEY,
  holder      TEXT NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX pool_slot_holders_expiry ON pool_slot_holders (expires_at);
CREATE TABLE pool_slot_leases (
  pool        TEXT NOT NULL,
  tenant_id   TEXT NOT NULL,
  token       INTEGER NOT NULL,
  slots       INTEGER NOT NULL CHECK (slots >= 0),
  wanted      INTEGER NOT NULL CHECK (wanted >= 0),
  PRIMARY KEY (pool, tenant_id, token)
) STRICT;
CREATE INDEX pool_slot_leases_token ON pool_slot_leases (token);
-- The fencing counter: one row, incremented for each new holder (a token is never handed out twice).
CREATE TABLE pool_slot_fence (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  token  INTEGER NOT NULL
) STRICT;
INSERT INTO pool_slot_fence (id, token) VALUES (1, 0);
