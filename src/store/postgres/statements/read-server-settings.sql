-- The server settings the store checks at start: whether a synchronous standby is configured (durability
-- `replicated`) and the WAL writer's delay (how long an unflushed commit may wait with synchronous_commit off).
-- Params: none. Returns names, delay (both text).
SELECT current_setting('synchronous_standby_names') AS names, current_setting('wal_writer_delay') AS delay
