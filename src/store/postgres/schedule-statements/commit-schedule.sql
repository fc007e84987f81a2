-- The guard of a scheduler pass's commit: moves the schedule's cursor, only while the pass holds the claim.
-- Params: :id, :owner, :token, :set_next (0/1), :next_fire_at, :last_success_at (or NULL), :release (0/1),
-- :release_until (a released schedule is not claimed again before then), :event_count (event seqs to reserve).
-- Result: tenant_id and the first reserved event seq if the claim was still held; none: fenced off (stale_write).
UPDATE schedules SET
  next_event_seq = next_event_seq + :event_count::bigint,
  next_fire_at = CASE WHEN :set_next::int = 1 THEN :next_fire_at::bigint ELSE next_fire_at END,
  last_success_at = coalesce(:last_success_at::bigint, last_success_at),
  claim_owner = CASE WHEN :release::int = 1 THEN NULL ELSE claim_owner END,
  claim_expires_at = CASE WHEN :release::int = 1 THEN :release_until::bigint ELSE claim_expires_at END
WHERE id = :id::text AND claim_owner = :owner::text AND claim_token = :token::bigint AND deleted_at IS NULL
RETURNING tenant_id, next_event_seq - :event_count::bigint AS first_seq
