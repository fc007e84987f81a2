-- One fire.
-- Params: :schedule_id, :logical_time.
SELECT * FROM schedule_fires WHERE schedule_id = :schedule_id AND logical_time = :logical_time
