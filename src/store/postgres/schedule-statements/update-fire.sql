-- Moves a fire from one status to the next (see schedules/fire-status.ts), guarded by its current status.
-- Params: :schedule_id, :logical_time, :from_status, :to_status, :run_id, :detail, :started_at, :schedule_version,
-- :fired_by, :run_settled. Result: a row if the fire had :from_status.
UPDATE schedule_fires SET
  status = :to_status::text, run_id = coalesce(:run_id::text, run_id), detail = coalesce(:detail::text, detail),
  started_at = coalesce(:started_at::bigint, started_at), schedule_version = :schedule_version::bigint, fired_by = :fired_by::text, run_settled = :run_settled::int
WHERE schedule_id = :schedule_id::text AND logical_time = :logical_time::bigint AND status = :from_status::text
RETURNING logical_time
