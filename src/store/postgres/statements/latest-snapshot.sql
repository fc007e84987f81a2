-- Params: :run_id. Returns the run's latest checkpoint journal entry (kind 'checkpoint'), or no row.
-- Served by journal_checkpoints (0041): one index probe however long the journal is.
SELECT * FROM journal WHERE run_id = :run_id AND kind = 'checkpoint' AND status = 'succeeded'
ORDER BY seq DESC LIMIT 1
