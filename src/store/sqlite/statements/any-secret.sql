-- Whether any tenant has a secret (startup refuses to run without a key then). Params: none. Returns name, or nothing.
SELECT s.name FROM secrets s LIMIT 1
