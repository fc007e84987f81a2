-- 0036: a grace period per cancel request (issue 21). cancel_grace_ms: the grace the cancel's requester gave (POST
-- /v1/runs/:id/cancel `graceMs`, 0..3600000 ms), set when the run becomes 'cancelling'; the process executing the run
-- lets tool calls in flight wrap up that long before aborting them, instead of the agent's or the node's grace.
-- NULL: none given (a cascaded cancel, or a request without one): the agent's or node's default applies.
ALTER TABLE runs ADD COLUMN cancel_grace_ms INTEGER;
