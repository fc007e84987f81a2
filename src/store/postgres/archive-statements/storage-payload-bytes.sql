-- Bytes of large payloads (0039) per tenant: each run's references, so a payload two tenants' runs share counts for
-- both (it is what each would free). Params: none. Result: { tenant_id, payload_bytes } rows.
SELECT r.tenant_id, COALESCE(SUM(p.size), 0)::bigint AS payload_bytes
FROM payload_refs p JOIN runs r ON r.id = p.run_id
GROUP BY r.tenant_id
