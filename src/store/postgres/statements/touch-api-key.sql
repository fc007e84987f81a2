-- Records that a key was used (the API calls it at most once a minute per key). Params: :id, :now.
UPDATE api_keys SET last_used_at = :now::bigint WHERE id = :id AND (last_used_at IS NULL OR last_used_at < :now::bigint)
