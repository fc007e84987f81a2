-- Advances the fair-claim clock to the virtual start time of a claim's latest pick (never backwards).
-- Params: :clock. Returns nothing.
UPDATE fair_clock SET vtime = greatest(vtime, :clock::double precision) WHERE id = 1
