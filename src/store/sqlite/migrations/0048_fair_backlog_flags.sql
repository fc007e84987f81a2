-- 0048: fair claims without a cluster-wide lock (issue 24), kept in step with the Postgres schema. SQLite has one
-- writer, so its fair claim still plans over the whole backlog under its write lock and never sets this flag; the
-- column exists so that both schemas stay the same.
ALTER TABLE fair_tenant_clocks ADD COLUMN backlogged INTEGER NOT NULL DEFAULT 0;
CREATE INDEX fair_tenant_clocks_backlog ON fair_tenant_clocks (vtime, tenant_id) WHERE backlogged = 1;
ALTER TABLE fair_clock ADD COLUMN refreshed_at INTEGER NOT NULL DEFAULT 0;
