-- A new fencing token for a pool-slot holder (never handed out twice). Params: none. Returns token.
UPDATE pool_slot_fence SET token = token + 1 WHERE id = 1 RETURNING token
