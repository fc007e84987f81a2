-- Deletes a schedule (kept as a tombstone so its fires stay readable history).
-- Params: :id, :now. Result: the row, or none if missing or deleted already.
UPDATE schedules SET deleted_at = :now, updated_at = :now, claim_owner = NULL, claim_expires_at = NULL
WHERE id = :id AND deleted_at IS NULL
RETURNING id
