-- Params: :run_id. Returns the run's journal in position order.
SELECT * FROM journal WHERE run_id = :run_id ORDER BY seq
