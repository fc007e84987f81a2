-- Drops the payload references of runs that no longer exist, recorded before :before (a run's input is
-- referenced just before its row is inserted). Params: :before. Returns nothing.
DELETE FROM payload_refs WHERE created_at < :before::bigint AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.id = payload_refs.run_id)
