-- 0003: schedules, their fires (unique per (schedule_id, logical_time)), the webhook allowlist, the notification outbox.
-- Times are integer milliseconds since the epoch; JSON columns hold text.

CREATE TABLE schedules (
  id                 TEXT PRIMARY KEY,
  tenant_id          TEXT NOT NULL,
  name               TEXT,
  version            INTEGER NOT NULL,
  cron               TEXT,
  interval_ms        INTEGER,
  time_zone          TEXT NOT NULL,
  start_at           INTEGER,
  end_at             INTEGER,
  paused             INTEGER NOT NULL DEFAULT 0,
  template           TEXT NOT NULL,
  catchup_window_ms  INTEGER NOT NULL,
  overlap            TEXT NOT NULL,
  webhook_url        TEXT,
  next_fire_at       INTEGER,
  last_success_at    INTEGER,
  next_event_seq     INTEGER NOT NULL DEFAULT 1,
  claim_owner        TEXT,
  claim_token        INTEGER NOT NULL DEFAULT 0,
  claim_expires_at   INTEGER,
  deleted_at         INTEGER,
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL
) STRICT;

CREATE INDEX schedules_by_tenant ON schedules (tenant_id, id) WHERE deleted_at IS NULL;
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE deleted_at IS NULL AND paused = 0;

CREATE TABLE schedule_fires (
  schedule_id       TEXT NOT NULL,
  logical_time      INTEGER NOT NULL,
  tenant_id         TEXT NOT NULL,
  kind              TEXT NOT NULL,
  status            TEXT NOT NULL,
  run_id            TEXT,
  schedule_version  INTEGER NOT NULL,
  fired_by          TEXT,
  detail            TEXT,
  run_settled       INTEGER NOT NULL DEFAULT 0,
  recorded_at       INTEGER NOT NULL,
  started_at        INTEGER,
  PRIMARY KEY (schedule_id, logical_time)
) STRICT, WITHOUT ROWID;

CREATE UNIQUE INDEX schedule_fires_run ON schedule_fires (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX schedule_fires_open ON schedule_fires (schedule_id, logical_time)
  WHERE run_settled = 0 AND status NOT IN ('skipped', 'missed');

-- What happened to a schedule's fires, in order (gapless seq per schedule): fire.requested, fire.started,
-- fire.skipped, fire.missed, fire.buffered, fire.cancelling_other, fire.cancelled_other, notification.queued.
CREATE TABLE schedule_events (
  schedule_id  TEXT NOT NULL,
  seq          INTEGER NOT NULL,
  type         TEXT NOT NULL,
  at           INTEGER NOT NULL,
  data         TEXT NOT NULL,
  PRIMARY KEY (schedule_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE webhook_allowlist (
  tenant_id  TEXT NOT NULL,
  origin     TEXT NOT NULL,
  PRIMARY KEY (tenant_id, origin)
) STRICT, WITHOUT ROWID;

CREATE TABLE schedule_notifications (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL,
  schedule_id      TEXT NOT NULL,
  run_id           TEXT NOT NULL UNIQUE,           -- one notification per failed run, ever
  url              TEXT NOT NULL,
  payload          TEXT NOT NULL,
  status           TEXT NOT NULL,                  -- pending | delivered | failed
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL,
  last_error       TEXT,
  claim_owner      TEXT,
  claim_token      INTEGER NOT NULL DEFAULT 0,
  claim_expires_at INTEGER,
  created_at       INTEGER NOT NULL,
  delivered_at     INTEGER
) STRICT;

CREATE INDEX schedule_notifications_due ON schedule_notifications (next_attempt_at) WHERE status = 'pending';
CREATE INDEX schedule_notifications_by_schedule ON schedule_notifications (schedule_id, created_at);
