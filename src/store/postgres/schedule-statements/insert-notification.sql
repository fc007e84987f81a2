-- Queues a failure notification; at most one per run ever (a second attempt to write one is a no-op).
-- Params: :id, :tenant_id, :schedule_id, :run_id, :url, :payload, :now.
INSERT INTO schedule_notifications (id, tenant_id, schedule_id, run_id, url, payload, status, attempts, next_attempt_at, created_at)
VALUES (:id::text, :tenant_id::text, :schedule_id::text, :run_id::text, :url::text, :payload::text, 'pending', 0, :now::bigint, :now::bigint)
ON CONFLICT (run_id) DO NOTHING
