-- 0010: tenant quotas and the state of fair claiming across tenants (issue 7).
-- weight: share of claims while backlogged; max_concurrent_runs / max_queued_runs: NULL means unlimited.
-- fair_tenant_clocks.vtime: a tenant's virtual time (claims served / weight); fair_clock.vtime: the virtual time of
-- the last claim, where a tenant that was idle starts again (it banks no credit while idle). Claimers lock the
-- fair_clock row for their transaction, so claims from several processes apply in one order.
-- Runs are claimed per tenant by (priority_rank, claim_after), hence runs_fair_claim.
ALTER TABLE tenants ADD COLUMN weight INTEGER NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 10000);
ALTER TABLE tenants ADD COLUMN max_concurrent_runs INTEGER CHECK (max_concurrent_runs >= 1);
ALTER TABLE tenants ADD COLUMN max_queued_runs INTEGER CHECK (max_queued_runs >= 1);
ALTER TABLE tenants ADD COLUMN updated_at BIGINT;

CREATE TABLE fair_tenant_clocks (
  tenant_id  TEXT PRIMARY KEY,
  vtime      DOUBLE PRECISION NOT NULL
);

CREATE TABLE fair_clock (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  vtime  DOUBLE PRECISION NOT NULL
);
INSERT INTO fair_clock (id, vtime) VALUES (1, 0);

CREATE INDEX runs_fair_claim ON runs (tenant_id, priority_rank, claim_after) WHERE claim_after IS NOT NULL;
