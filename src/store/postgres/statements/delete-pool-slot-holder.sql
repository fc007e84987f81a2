-- Ends a holder (after its slot rows). Params: :token.
DELETE FROM pool_slot_holders WHERE token = :token::bigint
