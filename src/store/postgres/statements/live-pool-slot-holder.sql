-- The holder if its lease is live. Params: :token, :now. Returns token, or no row.
SELECT token FROM pool_slot_holders WHERE token = :token::bigint AND expires_at > :now::bigint
