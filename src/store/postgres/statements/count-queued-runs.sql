-- Counts the tenant's queued runs (never claimed yet or handed back), up to :limit (index runs_live): admission
-- needs only to know whether the queue is full.
-- Params: :tenant_id, :limit. Returns queued.
SELECT count(*) AS queued FROM (SELECT 1 FROM runs WHERE tenant_id = :tenant_id AND status = 'queued' AND ended_at IS NULL LIMIT :limit::int) q
