-- 0019: the processes serving agent versions (issue 17), for GET /v1/agents: each `keel dev|server|worker`
-- announces itself at start (worker id = its lease owner), refreshes last_seen_at while it lives and removes its row
-- at a graceful stop; a crashed process's row ages out (readers only list rows seen recently).
-- served: JSON array of agent@version keys, as a claim names them.
CREATE TABLE serving_processes (
  worker_id     TEXT PRIMARY KEY,
  role          TEXT NOT NULL,
  host          TEXT NOT NULL,
  pid           INTEGER NOT NULL,
  served        TEXT NOT NULL,
  started_at    BIGINT NOT NULL,
  last_seen_at  BIGINT NOT NULL
);
CREATE INDEX serving_processes_seen ON serving_processes (last_seen_at);
