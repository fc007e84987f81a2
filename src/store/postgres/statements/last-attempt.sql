-- The run's latest attempt (a probation claim asks whether it ended with an expired lease). Params: :run_id.
SELECT run_id, number, worker, lease_token, started_at, ended_at, ending FROM run_attempts
WHERE run_id = :run_id ORDER BY number DESC LIMIT 1
