-- Moves a pending request to :status (approved, denied or expired); a decided request never changes again.
-- Params: :run_id, :execution_id, :status, :decided_by, :note, :now. Returns run_id, or no row when it was not
-- pending.
UPDATE approvals SET status = :status::text, decided_by = :decided_by::text, decided_at = :now::bigint,
  note = :note::text
WHERE run_id = :run_id::text AND execution_id = :execution_id::text AND status = 'pending'
RETURNING run_id
