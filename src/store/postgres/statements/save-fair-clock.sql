-- Not used by the Postgres fair claim since 0048 (Dialect.sharedFairClaims: claims lock a window of tenants, see
-- keel_fair_claim, migration 0054); kept because both dialects define the shared statements (the SQLite claim uses it).
-- Advances the fair-claim clock to the virtual start time of a claim's latest pick (never backwards).
-- Params: :clock. Returns nothing.
UPDATE fair_clock SET vtime = greatest(vtime, :clock::double precision) WHERE id = 1
