-- Moves a fire from one status to the next (see schedules/fire-status.ts), guarded by its current status.
-- Params: :schedule_id, :logical_time, :from_status, :to_status, :run_id, :detail, :started_at, :schedule_version,
-- :fired_by, :run_settled. Result: a row if the fire had :from_status.
UPDATE schedule_fires SET
  status = :to_status, run_id = coalesce(:run_id, run_id), detail = coalesce(:detail, detail),
  started_at = coalesce(:started_at, started_at), schedule_version = :schedule_version, fired_by = :fired_by, run_settled = :run_settled
WHERE schedule_id = :schedule_id AND logical_time = :logical_time AND status = :from_status
RETURNING logical_time
