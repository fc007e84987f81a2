-- Bytes of live journal entries and events per tenant (their stored JSON text). A full scan: for the metrics pass.
-- Params: none. Result: { tenant_id, journal_bytes, events_bytes } rows.
SELECT r.tenant_id,
  COALESCE(SUM((SELECT SUM(COALESCE(length(CAST(j.args AS BLOB)), 0) + COALESCE(length(CAST(j.result AS BLOB)), 0)
    + COALESCE(length(CAST(j.error AS BLOB)), 0)) FROM journal j WHERE j.run_id = r.id)), 0) AS journal_bytes,
  COALESCE(SUM((SELECT SUM(length(CAST(e.data AS BLOB))) FROM events e WHERE e.run_id = r.id)), 0) AS events_bytes
FROM runs r GROUP BY r.tenant_id
