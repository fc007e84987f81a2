-- Starts an attempt for each run a claim just leased (in the claim's transaction): its number (runs.attempts, which the
-- claim incremented), the worker holding the lease and its token. Runs the claim held back unleased are skipped.
-- Params: :ids (JSON array of run ids), :now.
INSERT INTO run_attempts (run_id, number, worker, lease_token, started_at, ended_at, ending)
SELECT id, attempts, lease_owner, lease_token, :now::bigint, NULL, 'running' FROM runs
WHERE id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) AND lease_owner IS NOT NULL
