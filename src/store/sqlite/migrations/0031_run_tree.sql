-- 0031: the run tree (issue 21): GET /v1/runs/:id/tree walks a run's children, their children and so on; a
-- partial index holds only the runs that have a parent.
CREATE INDEX runs_parent_run_id ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
