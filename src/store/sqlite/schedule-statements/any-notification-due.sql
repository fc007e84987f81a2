-- Whether any notification is due for delivery (the condition of claim-notifications.sql), as a read.
-- Params: :now. Result: a row if one is.
SELECT 1 AS due FROM schedule_notifications
WHERE status = 'pending' AND next_attempt_at <= :now AND (claim_expires_at IS NULL OR claim_expires_at <= :now)
LIMIT 1
