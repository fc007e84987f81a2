-- Sets (replaces) the tenant's approver webhook. Params: :tenant_id, :url, :secret_ref, :notify_decided (0/1),
-- :notify_expired (0/1), :now. Returns the row.
INSERT INTO approval_webhooks (tenant_id, url, secret_ref, notify_decided, notify_expired, updated_at)
VALUES (:tenant_id, :url, :secret_ref, :notify_decided, :notify_expired, :now)
ON CONFLICT (tenant_id) DO UPDATE SET url = excluded.url, secret_ref = excluded.secret_ref,
  notify_decided = excluded.notify_decided, notify_expired = excluded.notify_expired, updated_at = excluded.updated_at
RETURNING *
