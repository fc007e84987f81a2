-- Ends the attempt that holds this lease, in the transaction of the commit that ends or parks the run (or yields it
-- back). Params: :run_id, :lease_token, :ended_at, :ending (completed, parked, preempted, cancelled).
UPDATE run_attempts SET ending = :ending, ended_at = :ended_at
WHERE run_id = :run_id AND lease_token = :lease_token AND ending = 'running'
