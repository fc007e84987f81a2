-- Reserves one request and :tokens tokens under every key at once, or none of them (keel_reserve_rate, migration
-- 0014: locks the keys, sums the last minute, counts or refuses). Params: :keys (text[]), :rpm (integer[], NULL for
-- no limit), :tpm (bigint[], NULL for no limit), :tokens. Returns granted, at_second, wait_ms, blocked.
SELECT granted, at_second, wait_ms, blocked FROM keel_reserve_rate(:keys::text[], :rpm::integer[], :tpm::bigint[], :tokens::bigint)
