-- Records what Keel did to a run on its own account (a refused stale commit, a resolution, a re-admission, a
-- rerun, a reset, a version migration), in the run's tenant's audit log, as the system.
-- Params: :run_id, :at, :kind, :data.
INSERT INTO audit (tenant_id, run_id, at, kind, resource, data)
VALUES ((SELECT tenant_id FROM runs WHERE id = :run_id), :run_id, :at, :kind, 'run:' || :run_id, :data)
