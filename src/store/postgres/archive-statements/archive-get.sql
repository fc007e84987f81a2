-- A run's archive record. Params: :run_id. Result: the row, or none.
SELECT * FROM run_archives WHERE run_id = :run_id
