-- The cursor of "now" in the tenant-wide event order (0038): every event of a transaction below the horizon (0053)
-- sorts before it; those in flight, or committed since, after it (a few of those may be old: never one missed).
-- No params.
SELECT keel_event_horizon()::text AS tx, 0 AS pos
