-- Params: :id. Returns the run row or nothing.
SELECT * FROM runs WHERE id = :id
