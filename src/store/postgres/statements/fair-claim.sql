-- One pass of a fair claim without a cluster-wide lock, in one round trip: keel_fair_claim (migration 0054) locks the
-- window of backlogged tenants with the least virtual times (FOR UPDATE SKIP LOCKED), plans over them as
-- src/domain/fair-share.ts' FairClaim does, claims, starts the attempts, saves the served tenants' virtual times and
-- clears the mark of those found short. Sent on its own (no BEGIN/COMMIT), it is its own transaction.
-- Params: :owner, :now, :lease_expires_at, :served (JSON array of agent@version), :claimable_statuses (JSON array),
--         :limit, :window (tenants to lock), :backlog_weight (total weight of the backlog, 0 if unknown),
--         :batch_aging_ms.
-- Returns the claimed rows as they are after the claim, in fair order.
SELECT * FROM keel_fair_claim(
  :owner, :now::bigint, :lease_expires_at::bigint,
  ARRAY(SELECT jsonb_array_elements_text(:served::jsonb)),
  ARRAY(SELECT jsonb_array_elements_text(:claimable_statuses::jsonb)),
  :limit::int, :window::int, :backlog_weight::double precision, :batch_aging_ms::bigint)
