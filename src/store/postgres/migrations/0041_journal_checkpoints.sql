-- 0041: bounded replay (issue 22). A run's snapshots are its `checkpoint` journal entries; a resume reads the latest
-- one (latest-snapshot) and the journal from its position on (load-journal-from). This partial index finds the latest
-- without scanning the journal; it holds one row per checkpoint, so it costs nothing on other effects' commits.
CREATE INDEX journal_checkpoints ON journal (run_id, seq) WHERE kind = 'checkpoint';
