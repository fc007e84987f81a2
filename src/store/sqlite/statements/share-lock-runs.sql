-- Before a park's wake-if-ready: reads the awaited child runs. SQLite has one writer at a time, so no child's end
-- can be half-committed here and the plain read is already as good as a share lock. Params: :ids (JSON array of
-- run ids). Returns the ids.
SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(:ids)) ORDER BY id
