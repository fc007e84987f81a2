-- Registers a holder incarnation. Params: :token, :holder, :expires_at.
INSERT INTO pool_slot_holders (token, holder, expires_at) VALUES (:token::bigint, :holder, :expires_at::bigint)
