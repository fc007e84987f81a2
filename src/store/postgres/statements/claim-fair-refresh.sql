-- Whether this claim refreshes the backlog flags of fair claims: it does if no claim of the cluster has for :interval
-- ms and no other claim is deciding so now (the fair_clock row is skipped, never waited for, if locked).
-- Params: :now, :interval. Returns one row (id) if this claim is to refresh, none otherwise.
UPDATE fair_clock SET refreshed_at = :now::bigint
WHERE id IN (
  SELECT id FROM fair_clock WHERE id = 1 AND refreshed_at <= :now::bigint - :interval::bigint FOR UPDATE SKIP LOCKED
)
RETURNING id
