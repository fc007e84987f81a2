-- Retention: deletes platform audit entries older than :before (ms), at most :limit of them (the pass repeats).
-- Params: :before, :limit. Returns the number of rows deleted (run).
DELETE FROM platform_audit WHERE id IN (SELECT id FROM platform_audit WHERE at < :before ORDER BY id LIMIT :limit)
