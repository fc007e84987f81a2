-- Deletes the rows of processes not seen since :before (crashed long ago): the table stays the size of the fleet.
-- Params: :before.
DELETE FROM serving_processes WHERE last_seen_at < :before
