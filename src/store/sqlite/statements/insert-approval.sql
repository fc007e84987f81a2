-- Files a pending approval request for one tool call, unless the call has one already (a replay files it again).
-- Params: :run_id, :execution_id, :tenant_id, :agent, :seq, :tool, :args (JSON text), :args_hash, :risk, :rule,
-- :reason, :requested_at, :expires_at. Returns run_id, or no row when the request existed.
INSERT INTO approvals (run_id, execution_id, tenant_id, agent, seq, tool, args, args_hash, risk, rule, reason,
                       requested_at, expires_at)
VALUES (:run_id, :execution_id, :tenant_id, :agent, :seq, :tool, :args, :args_hash, :risk, :rule, :reason,
        :requested_at, :expires_at)
ON CONFLICT DO NOTHING
RETURNING run_id
