-- One schedule that is not deleted, for an edit that reads, then writes it. SQLite has one writer at a time and every
-- write transaction holds the database, so the plain read is already as good as a row lock.
-- Params: :id. Result: the row, or none.
SELECT * FROM schedules WHERE id = :id AND deleted_at IS NULL
