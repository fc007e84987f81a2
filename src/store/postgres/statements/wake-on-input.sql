-- Queues a waiting run if it waits for this input key. Params: :id, :key, :now. Returns state_version, or no row.
UPDATE runs SET status = 'queued', state_version = state_version + 1, waiting_reason = NULL, waiting_since = NULL,
  wake_at = NULL, claim_after = :now, updated_at = :now
WHERE id = :id AND status = 'waiting'
  AND EXISTS (SELECT 1 FROM journal j WHERE j.run_id = :id AND j.kind = 'input' AND j.name = :key AND j.status = 'waiting')
RETURNING state_version
