-- Bytes of live journal entries and events per tenant (their stored JSON text). A full scan: for the metrics pass.
-- Params: none. Result: { tenant_id, journal_bytes, events_bytes } rows.
SELECT r.tenant_id,
  COALESCE(SUM((SELECT SUM(COALESCE(octet_length(j.args), 0) + COALESCE(octet_length(j.result), 0)
    + COALESCE(octet_length(j.error), 0)) FROM journal j WHERE j.run_id = r.id)), 0)::bigint AS journal_bytes,
  COALESCE(SUM((SELECT SUM(octet_length(e.data)) FROM events e WHERE e.run_id = r.id)), 0)::bigint AS events_bytes
FROM runs r GROUP BY r.tenant_id
