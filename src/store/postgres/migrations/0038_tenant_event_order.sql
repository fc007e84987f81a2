-- 0038: a tenant-wide order of events (issue 25), the cursor of GET /v1/events. Each event keeps the id of the
-- transaction that wrote it (tx) and a position from a sequence (pos). Commit order is not sequence order (several
-- transactions are in flight at once, in one process and across processes), so a reader never reads past a
-- transaction still in flight: it takes only rows with tx below its snapshot's xmin (every transaction below it has
-- ended) and orders them by (tx, pos). A transaction committed late therefore lands after the cursor of anyone who
-- read before it ended, never behind it. Existing events all get this migration's transaction id.
ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE events ADD COLUMN pos BIGSERIAL;
CREATE INDEX events_tx_pos ON events (tx, pos);
