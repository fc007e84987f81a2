-- Records a fire decided by a scheduler pass. The primary key (schedule_id, logical_time) is what makes a second
-- run for the same fire impossible: a duplicate fails and the pass's transaction with it.
-- Params: every column below.
INSERT INTO schedule_fires (
  schedule_id, logical_time, tenant_id, kind, status, run_id, schedule_version, fired_by, detail, run_settled, recorded_at, started_at
) VALUES (
  :schedule_id::text, :logical_time::bigint, :tenant_id::text, :kind::text, :status::text, :run_id::text, :schedule_version::bigint, :fired_by::text, :detail::text, :run_settled::int, :now::bigint, :started_at::bigint
)
