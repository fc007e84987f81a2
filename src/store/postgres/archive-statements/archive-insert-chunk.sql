-- Records a stored, verified chunk with its position range; a chunk sent again replaces its row.
-- Params: :run_id, :stream, :first_seq, :last_seq, :sha256, :bytes, :records, :now. Result: changed rows.
INSERT INTO run_archive_chunks (run_id, stream, first_seq, last_seq, sha256, bytes, records, created_at)
VALUES (:run_id, :stream, :first_seq, :last_seq, :sha256, :bytes, :records, :now)
ON CONFLICT (run_id, stream, first_seq) DO UPDATE SET
  last_seq = excluded.last_seq, sha256 = excluded.sha256, bytes = excluded.bytes, records = excluded.records,
  created_at = excluded.created_at
