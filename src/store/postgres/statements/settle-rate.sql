-- Corrects a granted reservation's tokens by :delta_tokens (actual − reserved) in the second it was counted in.
-- Params: :keys (text[]), :second, :delta_tokens. Returns nothing.
UPDATE rate_windows SET tokens = greatest(0, tokens + :delta_tokens::bigint) WHERE key = ANY(:keys::text[]) AND second = :second::bigint
