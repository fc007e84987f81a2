-- Deletes expired holders (after their slot rows). Params: :now.
DELETE FROM pool_slot_holders WHERE expires_at <= :now
