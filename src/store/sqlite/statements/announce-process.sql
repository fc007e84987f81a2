-- Inserts or refreshes a serving process (its versions may have changed; its start time stays).
-- Params: :worker_id, :role, :host, :pid, :served (JSON array of agent@version), :started_at, :now.
INSERT INTO serving_processes (worker_id, role, host, pid, served, started_at, last_seen_at)
VALUES (:worker_id, :role, :host, :pid, :served, :started_at, :now)
ON CONFLICT (worker_id) DO UPDATE SET served = excluded.served, last_seen_at = excluded.last_seen_at
