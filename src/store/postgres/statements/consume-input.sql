-- Marks an input as used by the run's journal. Params: :run_id, :key.
UPDATE inputs SET consumed = 1 WHERE run_id = :run_id AND key = :key
