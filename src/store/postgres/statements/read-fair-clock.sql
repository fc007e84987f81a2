-- The fair-claim clock: the virtual start time of the latest claim (src/scheduling/fair-share.ts). Locks its row for
-- the transaction, so claims from several processes are planned and applied one at a time, in one order.
-- Params: none. Returns vtime.
SELECT vtime FROM fair_clock WHERE id = 1 FOR UPDATE
