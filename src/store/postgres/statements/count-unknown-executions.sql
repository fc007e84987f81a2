-- Tool executions whose outcome is unknown in runs that have not ended: the ones waiting for a query hook or an
-- operator's decision (index journal_unknown).
-- Params: none. Returns executions.
SELECT count(*)::int AS executions FROM journal j JOIN runs r ON r.id = j.run_id WHERE j.status = 'unknown' AND r.ended_at IS NULL
