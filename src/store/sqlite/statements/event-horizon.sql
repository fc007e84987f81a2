-- The tenant-wide event order's horizon: with one writer every committed event is readable, so it is unused. No
-- params.
SELECT '0' AS horizon
