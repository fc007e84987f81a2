-- Persists a cancellation request: the run becomes 'cancelling' and claimable unless a worker holds it
-- (that worker is told through its heartbeat and its next commit is fenced off by the state version).
-- Params: :id, :now, :from_statuses (JSON array), :grace_ms (the requester's grace, or null). Returns the
-- state_version, or no row.
UPDATE runs SET
  status = 'cancelling', state_version = state_version + 1,
  waiting_reason = NULL, waiting_since = NULL, wake_at = NULL,
  claim_after = CASE WHEN lease_owner IS NULL THEN :now ELSE lease_expires_at END,
  cancel_grace_ms = :grace_ms, updated_at = :now
WHERE id = :id AND status IN (SELECT jsonb_array_elements_text(:from_statuses::jsonb))
RETURNING state_version
