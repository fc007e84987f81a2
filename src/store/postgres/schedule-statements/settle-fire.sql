-- Marks a fire's run as ended and dealt with (notification written if it failed).
-- Params: :schedule_id, :logical_time. Result: a row if it was not settled yet.
UPDATE schedule_fires SET run_settled = 1
WHERE schedule_id = :schedule_id::text AND logical_time = :logical_time::bigint AND run_settled = 0
RETURNING logical_time
