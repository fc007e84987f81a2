-- Files a notification of :kind for one approval request in the outbox, when the tenant has a webhook that wants that
-- kind (requested: always; decided, expired: when asked for); never a second one for the same request and kind.
-- Params: :id, :tenant_id, :run_id, :execution_id, :kind, :payload (JSON text), :now. Returns id, or no row.
INSERT INTO approval_notifications (id, tenant_id, run_id, execution_id, kind, url, payload, next_attempt_at, created_at)
SELECT :id, w.tenant_id, :run_id, :execution_id, :kind, w.url, :payload, :now, :now
FROM approval_webhooks w
WHERE w.tenant_id = :tenant_id
  AND (:kind = 'requested' OR (:kind = 'decided' AND w.notify_decided = 1) OR (:kind = 'expired' AND w.notify_expired = 1))
ON CONFLICT DO NOTHING
RETURNING id
