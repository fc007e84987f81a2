-- Moves a node to a state the caller checked against the transition table, if it is still in :from.
-- Params: :id, :from, :state. Returns the changed-row count (0: gone or moved meanwhile).
UPDATE nodes SET state = :state::text WHERE id = :id::text AND state = :from::text
