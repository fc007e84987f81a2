-- The tenant's approver webhook. Params: :tenant_id. Returns the row, or none.
SELECT * FROM approval_webhooks WHERE tenant_id = :tenant_id::text
