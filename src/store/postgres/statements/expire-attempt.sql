-- Ends a run's running attempt as lease_expired: a claim found its lease expired unreleased (the worker died or
-- stalled). Params: :run_id, :ended_at (when the lease expired). Returns number and worker of the attempt, or no row.
UPDATE run_attempts SET ending = 'lease_expired', ended_at = :ended_at::bigint
WHERE run_id = :run_id AND ending = 'running'
RETURNING number, worker, ended_at
