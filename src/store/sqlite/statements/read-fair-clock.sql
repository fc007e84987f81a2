-- The fair-claim clock: the virtual start time of the latest claim (src/scheduling/fair-share.ts).
-- Params: none. Returns vtime.
SELECT vtime FROM fair_clock WHERE id = 1
