-- One schedule that is not deleted, under a row lock held to the end of the transaction (an edit reads, then writes).
-- Params: :id. Result: the row, or none.
SELECT * FROM schedules WHERE id = :id::text AND deleted_at IS NULL FOR UPDATE
