-- Removes a run's live events up to its archived watermark. Params: :run_id, :through. Result: rows deleted.
DELETE FROM events WHERE run_id = :run_id AND seq <= :through
