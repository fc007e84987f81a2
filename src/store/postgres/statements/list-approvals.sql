-- A page of the tenant's approval requests, newest first, after the cursor (:before_at, :before_id: the previous
-- page's last requested_at and execution_id; NULL: from the newest), filtered by :status and :run_id (NULL: any).
-- A pending request of a run that has ended (cancelled while it waited) is no longer pending: it is left out.
-- Params: :tenant_id, :status, :run_id, :before_at, :before_id, :limit. Returns every column.
SELECT run_id, execution_id, tenant_id, agent, seq, tool, args, args_hash, risk, rule, reason, status, requested_at, expires_at, decided_by, decided_at, note FROM approvals
WHERE tenant_id = :tenant_id::text
  AND (:status::text IS NULL OR status = :status::text)
  AND (status <> 'pending' OR run_id IN (SELECT id FROM runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled')))
  AND (:run_id::text IS NULL OR run_id = :run_id::text)
  AND (:before_at::bigint IS NULL OR requested_at < :before_at::bigint
       OR (requested_at = :before_at::bigint AND execution_id < :before_id::text))
ORDER BY requested_at DESC, execution_id DESC LIMIT :limit::int
