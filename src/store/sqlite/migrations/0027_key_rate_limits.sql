-- 0027: a request rate limit per API key (issue 20): at most requests_per_minute requests a minute through each API
-- process; NULL: the process's default (KEEL_KEY_REQUESTS_PER_MINUTE), unlimited when that is unset too.
ALTER TABLE api_keys ADD COLUMN requests_per_minute INTEGER;
