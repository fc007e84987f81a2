-- Below which transaction every event of the tenant-wide order (0038) is committed: keel_event_horizon() (0053).
-- Callers may reuse it for a while: it only grows, and an older one holds back more. No params.
SELECT keel_event_horizon()::text AS horizon
