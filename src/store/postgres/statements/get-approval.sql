-- One approval request. Params: :run_id, :execution_id. Returns every column, or no row.
SELECT run_id, execution_id, tenant_id, agent, seq, tool, args, args_hash, risk, rule, reason, status, requested_at, expires_at, decided_by, decided_at, note FROM approvals WHERE run_id = :run_id::text AND execution_id = :execution_id::text
