-- Gives slots back and records how many more the holder waits for; fenced by the token and guarded so a row
-- never goes below zero. Params: :pool, :tenant_id, :token, :count, :wanted. Changed rows: 1 returned, 0 not held.
UPDATE pool_slot_leases SET slots = slots - :count::int, wanted = :wanted::int
WHERE pool = :pool AND tenant_id = :tenant_id AND token = :token::bigint AND slots >= :count::int
