-- Moves a pending request to :status (approved, denied or expired); a decided request never changes again.
-- Params: :run_id, :execution_id, :status, :decided_by, :note, :now. Returns run_id, or no row when it was not
-- pending.
UPDATE approvals SET status = :status, decided_by = :decided_by, decided_at = :now, note = :note
WHERE run_id = :run_id AND execution_id = :execution_id AND status = 'pending'
RETURNING run_id
