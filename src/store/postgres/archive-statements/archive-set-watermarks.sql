-- Stores the contiguous watermarks derived from the recorded chunks; guarded by the claim's token.
-- Params: :run_id, :token, :journal_watermark, :events_watermark. Result: changed rows.
UPDATE run_archives SET journal_watermark = :journal_watermark, events_watermark = :events_watermark
WHERE run_id = :run_id AND claim_token = :token
