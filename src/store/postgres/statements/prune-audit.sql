-- Retention: deletes audit entries older than :before (ms), at most :limit of them (the pass repeats).
-- Params: :before, :limit. Returns the number of rows deleted (run).
DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE at < :before::bigint ORDER BY id LIMIT :limit::int)
