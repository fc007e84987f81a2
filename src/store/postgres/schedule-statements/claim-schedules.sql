-- Claims schedules that need a pass: a fire due (not paused), or an open fire (requested, waiting, or with a run to
-- observe), whose claim is free or expired. Each claim gets a new fencing token. Concurrent claimers skip each
-- other's rows (FOR UPDATE SKIP LOCKED).
-- Params: :owner, :now, :lease_expires_at, :limit. Result: the claimed rows.
UPDATE schedules SET claim_owner = :owner::text, claim_token = claim_token + 1, claim_expires_at = :lease_expires_at::bigint
WHERE id IN (
  SELECT s.id FROM schedules s
  WHERE s.deleted_at IS NULL
    AND (s.claim_expires_at IS NULL OR s.claim_expires_at <= :now::bigint)
    AND ((s.paused = 0 AND s.next_fire_at <= :now::bigint)
      OR EXISTS (SELECT 1 FROM schedule_fires f WHERE f.schedule_id = s.id AND f.run_settled = 0 AND f.status NOT IN ('skipped', 'missed')))
  ORDER BY s.next_fire_at
  LIMIT :limit::int
  FOR UPDATE OF s SKIP LOCKED
)
RETURNING *
