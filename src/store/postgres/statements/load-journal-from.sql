-- Params: :run_id, :from_seq. Returns the run's journal from position :from_seq on, in position order
-- (a resume from a snapshot reads only what follows it; the primary key (run_id, seq) serves it).
SELECT * FROM journal WHERE run_id = :run_id AND seq >= :from_seq ORDER BY seq
