-- The processes seen at :seen_since or later, oldest first.
-- Params: :seen_since. Returns worker_id, role, host, pid, served (JSON text), started_at, last_seen_at.
SELECT worker_id, role, host, pid, served, started_at, last_seen_at
FROM serving_processes WHERE last_seen_at >= :seen_since ORDER BY started_at, worker_id
