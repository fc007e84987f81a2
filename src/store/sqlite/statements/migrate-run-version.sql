-- Pins a queued, never-started run to another version of its agent. Guarded: still queued, still on :from_version,
-- still without a journal entry (a claim that raced it wins). Params: :id, :from_version, :to_version, :agent_key
-- (agent@to_version), :now. Returns state_version, or no row if the guard failed.
UPDATE runs SET
  agent_version = :to_version, agent_key = :agent_key, state_version = state_version + 1, updated_at = :now
WHERE id = :id AND status = 'queued' AND agent_version = :from_version
  AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.run_id = runs.id)
RETURNING state_version
