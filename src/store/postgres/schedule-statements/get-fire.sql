-- One fire.
-- Params: :schedule_id, :logical_time.
SELECT * FROM schedule_fires WHERE schedule_id = :schedule_id::text AND logical_time = :logical_time::bigint
