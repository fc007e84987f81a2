-- Whether a run is (still) ended, for the guard before its live rows are removed.
-- Params: :run_id. Result: { ended_at, tenant_id } or none.
SELECT ended_at, tenant_id FROM runs WHERE id = :run_id
