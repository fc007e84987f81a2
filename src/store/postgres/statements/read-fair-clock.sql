-- Not used by the Postgres fair claim since 0048 (Dialect.sharedFairClaims: claims lock a window of tenants, see
-- keel_fair_claim, migration 0054); kept because both dialects define the shared statements (the SQLite claim uses it).
-- The fair-claim clock: the virtual start time of the latest claim (src/scheduling/fair-share.ts). Locks its row for
-- the transaction, so claims from several processes are planned and applied one at a time, in one order.
-- Params: none. Returns vtime.
SELECT vtime FROM fair_clock WHERE id = 1 FOR UPDATE
