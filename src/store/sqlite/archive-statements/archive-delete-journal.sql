-- Removes a run's live journal entries up to its archived watermark. Params: :run_id, :through. Result: rows deleted.
DELETE FROM journal WHERE run_id = :run_id AND seq <= :through
