-- Replaces a schedule's editable fields and bumps its version by :bump (0 when only pausing or resuming).
-- The claim is left alone: a pass in progress finishes with the version it read, and its runs record that version.
-- Params: the editable columns, :id, :bump, :now. Result: the updated row, or none if missing or deleted.
UPDATE schedules SET
  name = :name::text, version = version + :bump::int, cron = :cron::text, interval_ms = :interval_ms::bigint, time_zone = :time_zone::text,
  start_at = :start_at::bigint, end_at = :end_at::bigint, paused = :paused::int, template = :template::text, catchup_window_ms = :catchup_window_ms::bigint,
  overlap = :overlap::text, webhook_url = :webhook_url::text, next_fire_at = :next_fire_at::bigint, updated_at = :now::bigint
WHERE id = :id::text AND deleted_at IS NULL
RETURNING *
