-- Gives leases back without progress: the runs are claimable at once (running → queued; cancelling stays).
-- Params: :owner, :ids (JSON array), :now.
UPDATE runs SET
  status = CASE status WHEN 'running' THEN 'queued' ELSE status END,
  lease_owner = NULL, lease_expires_at = NULL, claim_after = :now,
  state_version = state_version + 1, updated_at = :now
WHERE lease_owner = :owner AND id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) AND status IN ('running', 'cancelling')
