-- Re-admits a quarantined run (failed with poison_run) after a fix: queued again, the poison counter and the error
-- cleared, claimable at once; never a run whose history was archived (it would resume from an empty journal; the
-- archiver skips quarantined runs). Params: :id, :now. Returns state_version, or no row if the run is not quarantined.
UPDATE runs SET
  status = 'queued', error = NULL, result = NULL, outcome = NULL, compensation = NULL,
  lease_losses = 0, lease_loss_owners = NULL, lease_owner = NULL, lease_expires_at = NULL,
  claim_after = :now::bigint, state_version = state_version + 1, updated_at = :now::bigint, ended_at = NULL
WHERE id = :id AND status = 'failed' AND error::jsonb->>'code' = 'poison_run'
  AND NOT EXISTS (SELECT 1 FROM run_archives a WHERE a.run_id = runs.id)
RETURNING state_version
