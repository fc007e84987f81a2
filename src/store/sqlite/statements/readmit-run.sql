-- Re-admits a quarantined run (failed with poison_run) after a fix: queued again, the poison counter and the error
-- cleared, claimable at once. Params: :id, :now. Returns state_version, or no row if the run is not quarantined.
UPDATE runs SET
  status = 'queued', error = NULL, result = NULL, outcome = NULL, compensation = NULL,
  lease_losses = 0, lease_loss_owners = NULL, lease_owner = NULL, lease_expires_at = NULL,
  claim_after = :now, state_version = state_version + 1, updated_at = :now, ended_at = NULL
WHERE id = :id AND status = 'failed' AND json_extract(error, '$.code') = 'poison_run'
RETURNING state_version
