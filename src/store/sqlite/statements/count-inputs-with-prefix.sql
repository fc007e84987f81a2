-- How many inputs of a run have keys starting with a prefix (the messages delivered on a channel).
-- Params: :run_id, :prefix. Returns n.
SELECT COUNT(*) AS n FROM inputs WHERE run_id = :run_id AND substr(key, 1, length(:prefix)) = :prefix
