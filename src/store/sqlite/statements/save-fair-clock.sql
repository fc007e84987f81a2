-- Advances the fair-claim clock to the virtual start time of a claim's latest pick (never backwards).
-- Params: :clock. Returns nothing.
UPDATE fair_clock SET vtime = max(vtime, :clock) WHERE id = 1
