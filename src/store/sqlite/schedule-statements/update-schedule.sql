-- Replaces a schedule's editable fields and bumps its version by :bump (0 when only pausing or resuming).
-- The claim is left alone: a pass in progress finishes with the version it read, and its runs record that version.
-- Params: the editable columns, :id, :bump, :now. Result: the updated row, or none if missing or deleted.
UPDATE schedules SET
  name = :name, version = version + :bump, cron = :cron, interval_ms = :interval_ms, time_zone = :time_zone,
  start_at = :start_at, end_at = :end_at, paused = :paused, template = :template, catchup_window_ms = :catchup_window_ms,
  overlap = :overlap, webhook_url = :webhook_url, next_fire_at = :next_fire_at, updated_at = :now
WHERE id = :id AND deleted_at IS NULL
RETURNING *
