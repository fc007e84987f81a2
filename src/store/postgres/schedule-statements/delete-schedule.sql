-- Deletes a schedule (kept as a tombstone so its fires stay readable history).
-- Params: :id, :now. Result: the row, or none if missing or deleted already.
UPDATE schedules SET deleted_at = :now::bigint, updated_at = :now::bigint, claim_owner = NULL, claim_expires_at = NULL
WHERE id = :id::text AND deleted_at IS NULL
RETURNING id
