-- Params: :tenant_id, :idempotency_key. Returns the run created with this key, with its request hash.
SELECT * FROM runs WHERE tenant_id = :tenant_id AND idempotency_key = :idempotency_key
