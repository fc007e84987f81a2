-- Adds granted slots to a holder's row for (pool, tenant) and records how many more it waits for.
-- Params: :pool, :tenant_id, :token, :granted, :wanted.
INSERT INTO pool_slot_leases (pool, tenant_id, token, slots, wanted)
VALUES (:pool, :tenant_id, :token::bigint, :granted::int, :wanted::int)
ON CONFLICT (pool, tenant_id, token) DO UPDATE SET slots = pool_slot_leases.slots + excluded.slots, wanted = excluded.wanted
