-- A run's attempts, oldest first. Params: :run_id.
SELECT run_id, number, worker, lease_token, started_at, ended_at, ending FROM run_attempts
WHERE run_id = :run_id ORDER BY number
