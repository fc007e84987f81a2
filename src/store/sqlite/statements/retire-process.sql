-- Removes a process that stops gracefully (a crashed one ages out instead).
-- Params: :worker_id.
DELETE FROM serving_processes WHERE worker_id = :worker_id
