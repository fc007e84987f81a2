-- Drops a run's payload references (its journal was archived or deleted). Params: :run_id. Returns nothing.
DELETE FROM payload_refs WHERE run_id = :run_id::text
