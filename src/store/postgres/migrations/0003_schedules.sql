-- 0003: schedules, their fires (unique per (schedule_id, logical_time)), the webhook allowlist, the notification outbox.
-- The same model as the SQLite store's 0003. Times are integer milliseconds since the epoch; JSON columns hold text.

CREATE TABLE schedules (
  id                 TEXT PRIMARY KEY,
  tenant_id          TEXT NOT NULL,
  name               TEXT,
  version            BIGINT NOT NULL,
  cron               TEXT,
  interval_ms        BIGINT,
  time_zone          TEXT NOT NULL,
  start_at           BIGINT,
  end_at             BIGINT,
  paused             INTEGER NOT NULL DEFAULT 0,
  template           TEXT NOT NULL,
  catchup_window_ms  BIGINT NOT NULL,
  overlap            TEXT NOT NULL,
  webhook_url        TEXT,
  next_fire_at       BIGINT,
  last_success_at    BIGINT,
  next_event_seq     BIGINT NOT NULL DEFAULT 1,
  claim_owner        TEXT,
  claim_token        BIGINT NOT NULL DEFAULT 0,
  claim_expires_at   BIGINT,
  deleted_at         BIGINT,
  created_at         BIGINT NOT NULL,
  updated_at         BIGINT NOT NULL
);

CREATE INDEX schedules_by_tenant ON schedules (tenant_id, id) WHERE deleted_at IS NULL;
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE deleted_at IS NULL AND paused = 0;

CREATE TABLE schedule_fires (
  schedule_id       TEXT NOT NULL,
  logical_time      BIGINT NOT NULL,
  tenant_id         TEXT NOT NULL,
  kind              TEXT NOT NULL,
  status            TEXT NOT NULL,
  run_id            TEXT,
  schedule_version  BIGINT NOT NULL,
  fired_by          TEXT,
  detail            TEXT,
  run_settled       INTEGER NOT NULL DEFAULT 0,
  recorded_at       BIGINT NOT NULL,
  started_at        BIGINT,
  PRIMARY KEY (schedule_id, logical_time)
);

CREATE UNIQUE INDEX schedule_fires_run ON schedule_fires (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX schedule_fires_open ON schedule_fires (schedule_id, logical_time)
  WHERE run_settled = 0 AND status NOT IN ('skipped', 'missed');

-- What happened to a schedule's fires, in order (gapless seq per schedule): fire.requested, fire.started,
-- fire.skipped, fire.missed, fire.buffered, fire.cancelling_other, fire.cancelled_other, notification.queued.
CREATE TABLE schedule_events (
  schedule_id  TEXT NOT NULL,
  seq          BIGINT NOT NULL,
  type         TEXT NOT NULL,
  at           BIGINT NOT NULL,
  data         TEXT NOT NULL,
  PRIMARY KEY (schedule_id, seq)
);

CREATE TABLE webhook_allowlist (
  tenant_id  TEXT NOT NULL,
  origin     TEXT NOT NULL,
  PRIMARY KEY (tenant_id, origin)
);

CREATE TABLE schedule_notifications (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL,
  schedule_id      TEXT NOT NULL,
  run_id           TEXT NOT NULL UNIQUE,           -- one notification per failed run, ever
  url              TEXT NOT NULL,
  payload          TEXT NOT NULL,
  status           TEXT NOT NULL,                  -- pending | delivered | failed
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  BIGINT NOT NULL,
  last_error       TEXT,
  claim_owner      TEXT,
  claim_token      BIGINT NOT NULL DEFAULT 0,
  claim_expires_at BIGINT,
  created_at       BIGINT NOT NULL,
  delivered_at     BIGINT
);

CREATE INDEX schedule_notifications_due ON schedule_notifications (next_attempt_at) WHERE status = 'pending';
CREATE INDEX schedule_notifications_by_schedule ON schedule_notifications (schedule_id, created_at);
