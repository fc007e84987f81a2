-- Before a park's wake-if-ready: share-locks the awaited child runs, in id order, so a child's end committing now is
-- waited for and then seen (a wake-run of that end, made while the parent was still running, woke nothing).
-- Params: :ids (JSON array of run ids). Returns the ids locked.
SELECT id FROM runs WHERE id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) ORDER BY id FOR SHARE
