-- Params: :run_id, :execution_id. Returns the journal entry of that tool execution, or nothing.
SELECT * FROM journal WHERE run_id = :run_id AND execution_id = :execution_id
