-- Reads a run for checks and writes made on it in this transaction. SQLite has one writer at a time, and every write
-- transaction holds the database, so the plain read is already as good as a row lock. Params: :id.
-- Returns the run row, or none.
SELECT * FROM runs WHERE id = :id
