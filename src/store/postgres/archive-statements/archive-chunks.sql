-- A run's recorded chunks, by stream then position. Params: :run_id. Result: chunk rows.
SELECT * FROM run_archive_chunks WHERE run_id = :run_id ORDER BY stream, first_seq
