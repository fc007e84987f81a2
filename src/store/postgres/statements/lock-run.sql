-- Reads a run under a row lock held to the end of the transaction, so the checks and writes made on it see no
-- concurrent change from another process. Params: :id. Returns the run row, or none.
SELECT * FROM runs WHERE id = :id FOR UPDATE
