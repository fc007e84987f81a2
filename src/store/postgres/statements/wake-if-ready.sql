-- Right after a park: queues the run instead if an awaited input already arrived or an awaited child already ended.
-- Params: :id, :now, :input_keys (JSON array), :child_ids (JSON array). Returns state_version, or no row.
UPDATE runs SET status = 'queued', waiting_reason = NULL, waiting_since = NULL, wake_at = NULL, claim_after = :now
WHERE id = :id AND status = 'waiting' AND (
  EXISTS (SELECT 1 FROM inputs i WHERE i.run_id = :id AND i.consumed = 0 AND i.key IN (SELECT jsonb_array_elements_text(:input_keys::jsonb)))
  OR EXISTS (SELECT 1 FROM runs c WHERE c.id IN (SELECT jsonb_array_elements_text(:child_ids::jsonb))
             AND c.status IN ('succeeded', 'failed', 'cancelled'))
)
RETURNING state_version
