-- The cursor of "now" in the tenant-wide event order (0038): after the last event inserted. No params.
SELECT 0 AS tx, COALESCE(MAX(pos), 0) AS pos FROM events
