-- Creates a schedule at version 1.
-- Params: every column below. Fails on a duplicate id.
INSERT INTO schedules (
  id, tenant_id, name, version, cron, interval_ms, time_zone, start_at, end_at, paused, template,
  catchup_window_ms, overlap, webhook_url, next_fire_at, created_at, updated_at
) VALUES (
  :id, :tenant_id, :name, 1, :cron, :interval_ms, :time_zone, :start_at, :end_at, :paused, :template,
  :catchup_window_ms, :overlap, :webhook_url, :next_fire_at, :now, :now
)
