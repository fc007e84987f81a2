-- Copies a run's journal positions 1..:position to a new run (a reset): the same effects, states, results and
-- execution ids, so the new run replays them instead of executing them again. lease_token 0 marks an entry no lease
-- of the new run wrote. Params: :run_id (the new run), :source_run_id, :position. Returns nothing.
INSERT INTO journal (run_id, seq, kind, name, status, args, result, error, execution_id, effect_class, attempts,
                     lease_token, worker, queued_at, started_at, ended_at, deadline_at)
SELECT :run_id::text, seq, kind, name, status, args, result, error, execution_id, effect_class, attempts,
       0, worker, queued_at, started_at, ended_at, deadline_at
FROM journal
WHERE run_id = :source_run_id::text AND seq <= :position::int
