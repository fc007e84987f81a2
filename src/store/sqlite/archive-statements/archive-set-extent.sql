-- Records the positions a run's archive must cover and the snapshot written before anything is removed; guarded by
-- the claim's token. Params: :run_id, :token, :journal_last, :events_last, :snapshot_sha256. Result: changed rows.
UPDATE run_archives SET journal_last = :journal_last, events_last = :events_last, snapshot_sha256 = :snapshot_sha256
WHERE run_id = :run_id AND claim_token = :token
