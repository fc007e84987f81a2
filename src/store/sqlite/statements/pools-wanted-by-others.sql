-- The pools where another live holder waits for slots (so this holder gives back surplus instead of reusing it).
-- Params: :token, :now. Returns pool per row.
SELECT DISTINCT l.pool FROM pool_slot_leases l JOIN pool_slot_holders h ON h.token = l.token
WHERE l.token <> :token AND l.wanted > 0 AND h.expires_at > :now
