-- Files a pending approval request for one tool call, unless the call has one already (a replay files it again).
-- Params: :run_id, :execution_id, :tenant_id, :agent, :seq, :tool, :args (JSON text), :args_hash, :risk, :rule,
-- :reason, :requested_at, :expires_at. Returns run_id, or no row when the request existed.
INSERT INTO approvals (run_id, execution_id, tenant_id, agent, seq, tool, args, args_hash, risk, rule, reason,
                       requested_at, expires_at)
VALUES (:run_id::text, :execution_id::text, :tenant_id::text, :agent::text, :seq::int, :tool::text, :args::text,
        :args_hash::text, :risk::text, :rule::text, :reason::text, :requested_at::bigint, :expires_at::bigint)
ON CONFLICT DO NOTHING
RETURNING run_id
