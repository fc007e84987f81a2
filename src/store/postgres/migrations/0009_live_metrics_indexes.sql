-- 0009: indexes for metrics read at scrape time (live runs per tenant and status; unknown tool executions), so a
-- scrape reads only live rows, never the run history. Numbered apart from neighbouring migrations on purpose: it
-- only adds indexes, so it commutes with any other migration.
CREATE INDEX runs_live ON runs (tenant_id, status) WHERE ended_at IS NULL;
CREATE INDEX journal_unknown ON journal (run_id) WHERE status = 'unknown';
