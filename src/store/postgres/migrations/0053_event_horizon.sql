-- 0053: the horizon of the tenant-wide event order (0038), as one function for the statements that read it
-- (list-tenant-events, tenant-events-head). An event is safe to hand out once every transaction that could still
-- commit an event sorting before it has ended: that is every event whose writing transaction is below the oldest one
-- still in flight in the caller's snapshot. The snapshot's xmin alone is cluster-wide: a long transaction in ANY
-- database of the server (another application, a pg_dump, a test) would stall every tenant stream for its duration.
-- A transaction that pg_stat_activity shows in another database cannot write this database's events, so it is passed
-- over. One that ended after the snapshot was taken is no longer listed and still counts (its events are invisible
-- to the snapshot), as do prepared transactions: the horizon only ever errs towards holding back. STABLE, so it sees
-- the calling statement's snapshot.
CREATE FUNCTION keel_event_horizon() RETURNS xid8 LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT min(x)
       FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE (x::text::numeric % 4294967296)::bigint NOT IN (
        SELECT a.backend_xid::text::bigint
          FROM pg_stat_activity a
         WHERE a.backend_xid IS NOT NULL
           AND a.datid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = current_database()))),
    pg_snapshot_xmax(pg_current_snapshot()))
$$;
