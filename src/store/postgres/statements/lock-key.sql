-- Serialises transactions that act on the same key across processes (an idempotency key, a tenant's admission) with
-- a transaction-scoped advisory lock, released at COMMIT or ROLLBACK. Params: :key. Returns one row.
SELECT pg_advisory_xact_lock(hashtext(:key)) AS locked
