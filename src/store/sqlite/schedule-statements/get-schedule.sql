-- One schedule that is not deleted.
-- Params: :id. Result: the row, or none.
SELECT * FROM schedules WHERE id = :id AND deleted_at IS NULL
