-- Records a requested fire (trigger, backfill) as pending, or reopens one that was missed or skipped.
-- Params: :schedule_id, :tenant_id, :logical_time, :kind, :schedule_version, :now.
-- Result: a row if the fire is now pending; none if it existed in another status (it fired already).
INSERT INTO schedule_fires (schedule_id, logical_time, tenant_id, kind, status, schedule_version, run_settled, recorded_at)
VALUES (:schedule_id, :logical_time, :tenant_id, :kind, 'pending', :schedule_version, 0, :now)
ON CONFLICT (schedule_id, logical_time) DO UPDATE SET status = 'pending', kind = excluded.kind, run_settled = 0, recorded_at = excluded.recorded_at
  WHERE schedule_fires.status IN ('missed', 'skipped')
RETURNING logical_time
