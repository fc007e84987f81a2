-- Files a notification of :kind for one approval request in the outbox, when the tenant has a webhook that wants that
-- kind (requested: always; decided, expired: when asked for); never a second one for the same request and kind.
-- Params: :id, :tenant_id, :run_id, :execution_id, :kind, :payload (JSON text), :now. Returns id, or no row.
INSERT INTO approval_notifications (id, tenant_id, run_id, execution_id, kind, url, payload, next_attempt_at, created_at)
SELECT :id::text, w.tenant_id, :run_id::text, :execution_id::text, :kind::text, w.url, :payload::text, :now::bigint,
       :now::bigint
FROM approval_webhooks w
WHERE w.tenant_id = :tenant_id::text
  AND (:kind::text = 'requested' OR (:kind::text = 'decided' AND w.notify_decided = 1)
       OR (:kind::text = 'expired' AND w.notify_expired = 1))
ON CONFLICT DO NOTHING
RETURNING id
