-- Creates a schedule at version 1.
-- Params: every column below. Fails on a duplicate id.
INSERT INTO schedules (
  id, tenant_id, name, version, cron, interval_ms, time_zone, start_at, end_at, paused, template,
  catchup_window_ms, overlap, webhook_url, next_fire_at, created_at, updated_at
) VALUES (
  :id::text, :tenant_id::text, :name::text, 1, :cron::text, :interval_ms::bigint, :time_zone::text, :start_at::bigint, :end_at::bigint, :paused::int, :template::text,
  :catchup_window_ms::bigint, :overlap::text, :webhook_url::text, :next_fire_at::bigint, :now::bigint, :now::bigint
)
