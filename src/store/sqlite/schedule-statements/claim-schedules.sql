-- Claims schedules that need a pass: a fire due (not paused), or an open fire (requested, waiting, or with a run to
-- observe), whose claim is free or expired. Each claim gets a new fencing token.
-- Params: :owner, :now, :lease_expires_at, :limit. Result: the claimed rows.
UPDATE schedules SET claim_owner = :owner, claim_token = claim_token + 1, claim_expires_at = :lease_expires_at
WHERE id IN (
  SELECT s.id FROM schedules s
  WHERE s.deleted_at IS NULL
    AND (s.claim_expires_at IS NULL OR s.claim_expires_at <= :now)
    AND ((s.paused = 0 AND s.next_fire_at <= :now)
      OR EXISTS (SELECT 1 FROM schedule_fires f WHERE f.schedule_id = s.id AND f.run_settled = 0 AND f.status NOT IN ('skipped', 'missed')))
  ORDER BY s.next_fire_at
  LIMIT :limit
)
RETURNING *
