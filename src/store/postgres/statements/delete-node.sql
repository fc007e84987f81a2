-- Removes a node and its token (it can no longer register or heartbeat).
-- Params: :id. Returns the changed-row count.
DELETE FROM nodes WHERE id = :id::text
