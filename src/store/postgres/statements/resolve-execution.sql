-- An operator's verdict on an execution whose outcome was unknown: succeeded (with its result), failed, or
-- pending (run it again). Only an `unknown` entry changes. Params: :run_id, :seq, :status, :result, :error, :now.
-- Returns seq, or no row if the entry was not unknown.
UPDATE journal SET status = :status, result = :result, error = :error, ended_at = :now, worker = NULL
WHERE run_id = :run_id AND seq = :seq AND status = 'unknown'
RETURNING seq
