-- Gives back every slot of a holder (a graceful stop). Params: :token.
DELETE FROM pool_slot_leases WHERE token = :token
