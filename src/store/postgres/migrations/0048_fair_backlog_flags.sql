-- 0048: fair claims without a cluster-wide lock (issue 24). fair_tenant_clocks.backlogged marks the tenants a claim
-- looks at: set by a backlog refresh (flag-fair-tenants) for every tenant with claimable runs and room under its cap,
-- cleared by the claim that finds a tenant without either. A claim locks the backlogged tenants with the least
-- virtual times (fair-window: FOR UPDATE SKIP LOCKED over this index), so claimers of several processes serve
-- different tenants at once, each in virtual-time order, and no row is locked by every claim (fair_clock is written
-- only by a refresh, and never waited for).
ALTER TABLE fair_tenant_clocks ADD COLUMN backlogged BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX fair_tenant_clocks_backlog ON fair_tenant_clocks (vtime, tenant_id) WHERE backlogged;
-- fair_clock.refreshed_at: when a claim last refreshed the backlog flags (ms), so that one claim of the cluster does
-- so per FAIR_BACKLOG_REFRESH_MS, not one per process (claim-fair-refresh).
ALTER TABLE fair_clock ADD COLUMN refreshed_at BIGINT NOT NULL DEFAULT 0;
