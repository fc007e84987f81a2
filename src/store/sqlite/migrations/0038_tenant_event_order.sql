-- 0038: a tenant-wide order of events (issue 25), the cursor of GET /v1/events. SQLite has one writer, so commit
-- order is insertion order: each event gets the next position (pos) when it is inserted (insert-event.sql computes
-- it in the INSERT, one probe of the index below). Existing events are numbered by time. The Postgres store orders
-- by (tx, pos); here tx is always 0.
ALTER TABLE events ADD COLUMN pos INTEGER;
UPDATE events SET pos = o.n
FROM (SELECT run_id, seq, ROW_NUMBER() OVER (ORDER BY at, run_id, seq) AS n FROM events) AS o
WHERE o.run_id = events.run_id AND o.seq = events.seq;
CREATE UNIQUE INDEX events_pos ON events (pos);
