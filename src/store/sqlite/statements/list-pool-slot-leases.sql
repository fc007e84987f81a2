-- Slot rows of live holders, for operators and tests. Params: :now. Returns pool, tenant_id, holder, token, slots,
-- wanted, expires_at.
SELECT l.pool, l.tenant_id, h.holder, l.token, l.slots, l.wanted, h.expires_at
FROM pool_slot_leases l JOIN pool_slot_holders h ON h.token = l.token
WHERE h.expires_at > :now
ORDER BY l.pool, l.tenant_id, h.holder, l.token
