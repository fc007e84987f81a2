-- Deletes the slot rows of expired holders (they no longer count). Params: :now.
DELETE FROM pool_slot_leases WHERE token IN (SELECT token FROM pool_slot_holders WHERE expires_at <= :now)
