-- Gives leases back without progress: the runs are claimable at once (running → queued; cancelling stays).
-- Rows are locked in id order, like every multi-run write. Params: :owner, :ids (JSON array), :now.
WITH locked AS (
  SELECT id FROM runs
  WHERE lease_owner = :owner AND id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) AND status IN ('running', 'cancelling')
  ORDER BY id
  FOR UPDATE
)
UPDATE runs SET
  status = CASE status WHEN 'running' THEN 'queued' ELSE status END,
  lease_owner = NULL, lease_expires_at = NULL, claim_after = :now::bigint,
  state_version = state_version + 1, updated_at = :now::bigint
WHERE id IN (SELECT id FROM locked)
