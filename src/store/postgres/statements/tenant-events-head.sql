-- The cursor of "now" in the tenant-wide event order (0038): every event of a transaction below this snapshot's xmin
-- sorts before it; those in flight, or committed since, after it (a few of those may be old: never one missed).
-- No params.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS tx, 0 AS pos
