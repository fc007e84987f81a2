-- Extends a holder's lease if it has not expired (an expired holder's slots may already be someone else's).
-- Params: :token, :now, :expires_at. Changed rows: 1 renewed, 0 lost.
UPDATE pool_slot_holders SET expires_at = :expires_at WHERE token = :token AND expires_at > :now
