-- Extends the leases the owner still holds, skipping rows a commit is writing right now (FOR UPDATE SKIP LOCKED):
-- a heartbeat never waits, so it can never deadlock with a batch of commits. A skipped run is still held; its lease
-- is extended by the next heartbeat. Params: :owner, :ids (JSON array), :lease_expires_at.
-- Returns id, status, state_version, cancel_grace_ms of each run whose lease was extended.
WITH locked AS (
  SELECT id FROM runs
  WHERE lease_owner = :owner AND id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) AND status IN ('running', 'cancelling')
  ORDER BY id
  FOR UPDATE SKIP LOCKED
)
UPDATE runs SET lease_expires_at = :lease_expires_at::bigint, claim_after = :lease_expires_at::bigint
WHERE id IN (SELECT id FROM locked)
RETURNING id, status, state_version, cancel_grace_ms
