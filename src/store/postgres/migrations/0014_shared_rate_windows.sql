-- 0014: model rate limits shared by every process on this database (requests and tokens per minute per key:
-- model:<name>, account:<name>, tenant:<id>). One row per key and epoch second; a reservation counts the rows of the
-- last 61 seconds (a whole minute however the seconds fall), so N processes together stay within each limit.
-- keel_reserve_rate locks its keys (advisory, transaction-scoped, in key order: no lock cycles), and each of its
-- statements reads a fresh snapshot (plpgsql, READ COMMITTED), so a reservation sees every reservation committed
-- before it got the lock.
CREATE TABLE rate_windows (
  key       TEXT NOT NULL,
  second    BIGINT NOT NULL,
  requests  INTEGER NOT NULL,
  tokens    BIGINT NOT NULL,
  PRIMARY KEY (key, second)
);

-- Returns one row: granted (and the second it was counted in), or the wait until the tightest key would admit it.
CREATE FUNCTION keel_reserve_rate(p_keys TEXT[], p_rpm INTEGER[], p_tpm BIGINT[], p_tokens BIGINT)
RETURNS TABLE (granted BOOLEAN, at_second BIGINT, wait_ms BIGINT, blocked TEXT)
LANGUAGE plpgsql AS $$
DECLARE
  now_ms BIGINT;
  now_s BIGINT;
  i INTEGER;
  used_requests BIGINT;
  used_tokens BIGINT;
  key_wait BIGINT;
  worst_wait BIGINT := -1;
  worst_key TEXT;
  bucket RECORD;
BEGIN
  FOR i IN SELECT ord FROM unnest(p_keys) WITH ORDINALITY AS k(name, ord) ORDER BY name LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('keel.rate:' || p_keys[i], 0));
  END LOOP;
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
  now_s := now_ms / 1000;
  FOR i IN 1 .. array_length(p_keys, 1) LOOP
    DELETE FROM rate_windows WHERE key = p_keys[i] AND second <= now_s - 61;
    SELECT coalesce(sum(requests), 0), coalesce(sum(tokens), 0) INTO used_requests, used_tokens FROM rate_windows WHERE key = p_keys[i];
    IF (p_rpm[i] IS NOT NULL AND used_requests + 1 > p_rpm[i]) OR (p_tpm[i] IS NOT NULL AND used_tokens + p_tokens > p_tpm[i]) THEN
      -- Over a limit: wait until enough of the oldest seconds have left the window for every limit of the key to fit.
      key_wait := 61000; -- (never fits: the caller refuses a call larger than the TPM limit before asking)
      FOR bucket IN SELECT second, requests, tokens FROM rate_windows WHERE key = p_keys[i] ORDER BY second LOOP
        used_requests := used_requests - bucket.requests;
        used_tokens := used_tokens - bucket.tokens;
        IF (p_rpm[i] IS NULL OR used_requests + 1 <= p_rpm[i]) AND (p_tpm[i] IS NULL OR used_tokens + p_tokens <= p_tpm[i]) THEN
          key_wait := (bucket.second + 61) * 1000 - now_ms;
          EXIT;
        END IF;
      END LOOP;
      IF key_wait > worst_wait THEN
        worst_wait := key_wait;
        worst_key := p_keys[i];
      END IF;
    END IF;
  END LOOP;
  IF worst_key IS NOT NULL THEN
    RETURN QUERY SELECT false, NULL::BIGINT, worst_wait, worst_key;
    RETURN;
  END IF;
  FOR i IN 1 .. array_length(p_keys, 1) LOOP
    INSERT INTO rate_windows AS w (key, second, requests, tokens) VALUES (p_keys[i], now_s, 1, p_tokens)
      ON CONFLICT (key, second) DO UPDATE SET requests = w.requests + 1, tokens = w.tokens + p_tokens;
  END LOOP;
  RETURN QUERY SELECT true, now_s, 0::BIGINT, NULL::TEXT;
END;
$$;
