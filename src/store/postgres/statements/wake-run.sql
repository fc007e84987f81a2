-- Queues a waiting run (its child ended). Params: :id, :now. Returns state_version, or no row if it was not waiting.
UPDATE runs SET status = 'queued', state_version = state_version + 1, waiting_reason = NULL, waiting_since = NULL,
  wake_at = NULL, claim_after = :now, updated_at = :now
WHERE id = :id AND status = 'waiting'
RETURNING state_version
