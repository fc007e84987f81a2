-- 0029: progress and stuck runs (issue 21). `progress` is the JSON of the agent's last ctx.progress(state)
-- ({ state, at }), written by a small commit of its own (not a journal position: replay never repeats it);
-- `stalled` is the JSON of the stall the engine saw ({ since, effect, policy }) while the run is running, cleared
-- when it moves again or ends.
ALTER TABLE runs ADD COLUMN progress TEXT;
ALTER TABLE runs ADD COLUMN stalled TEXT;
