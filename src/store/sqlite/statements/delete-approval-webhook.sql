-- Removes the tenant's approver webhook (notifications already filed stay and are delivered). Params: :tenant_id.
-- Returns tenant_id, or no row when there was none.
DELETE FROM approval_webhooks WHERE tenant_id = :tenant_id RETURNING tenant_id
