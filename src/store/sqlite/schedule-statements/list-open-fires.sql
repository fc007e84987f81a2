-- Fires that still need the scheduler: waiting for a run, or with a run not settled yet; oldest first, with the
-- run's status (NULL when there is no run).
-- Params: :schedule_id.
SELECT f.*, r.status AS run_status FROM schedule_fires f LEFT JOIN runs r ON r.id = f.run_id
WHERE f.schedule_id = :schedule_id AND f.run_settled = 0 AND f.status NOT IN ('skipped', 'missed')
ORDER BY f.logical_time
