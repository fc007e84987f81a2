-- Whether any schedule needs a pass now (the condition of claim-schedules.sql): a read, so an idle scheduler
-- never opens a write transaction.
-- Params: :now. Result: a row if one does.
SELECT 1 AS due FROM schedules s
WHERE s.deleted_at IS NULL
  AND (s.claim_expires_at IS NULL OR s.claim_expires_at <= :now::bigint)
  AND ((s.paused = 0 AND s.next_fire_at <= :now::bigint)
    OR EXISTS (SELECT 1 FROM schedule_fires f WHERE f.schedule_id = s.id AND f.run_settled = 0 AND f.status NOT IN ('skipped', 'missed')))
LIMIT 1
