-- Serialises transactions that act on the same key. SQLite has one writer at a time and every write transaction holds
-- the database, so there is nothing more to lock: the statement only keeps the procedures dialect-neutral.
-- Params: :key. Returns one row.
SELECT :key AS locked
