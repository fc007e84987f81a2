-- The tenant's events after the cursor (:after_tx, :after_pos), in the tenant-wide order (0038), each with its run's
-- agent, among at most :examine events of all tenants after the cursor; then one marker row (examined > 0: how many
-- were examined) at the place of the last one examined, where the next read starts when fewer than :limit events
-- came back. Only events below :horizon (keel_event_horizon(), 0053, taken by the caller: an older one only holds back
-- more) are read, so no event committed later can sort before the last one examined. Params: :tenant_id, :after_tx
-- (xid8 as text), :after_pos, :run_ids (JSON array of run ids, or null), :agent (or null), :types (JSON array of event
-- types, or null), :parent_run_id (or null), :limit, :examine, :horizon (xid8 as text).
WITH examined AS (
  SELECT e.run_id, e.seq, e.type, e.at, e.data, e.tx, e.pos
  FROM events e
  WHERE (e.tx, e.pos) > (:after_tx::text::xid8, :after_pos::bigint)
    AND e.tx < :horizon::text::xid8
  ORDER BY e.tx, e.pos
  LIMIT :examine::int
), matched AS (
  SELECT x.run_id, x.seq, x.type, x.at, x.data, x.tx, x.pos, r.agent
  FROM examined x JOIN runs r ON r.id = x.run_id
  WHERE r.tenant_id = :tenant_id
    AND (:run_ids::jsonb IS NULL OR x.run_id IN (SELECT jsonb_array_elements_text(:run_ids::jsonb)))
    AND (:agent::text IS NULL OR r.agent = :agent::text)
    AND (:types::jsonb IS NULL OR x.type IN (SELECT jsonb_array_elements_text(:types::jsonb)))
    AND (:parent_run_id::text IS NULL OR r.parent_run_id = :parent_run_id::text)
  ORDER BY x.tx, x.pos
  LIMIT :limit::int
)
SELECT run_id, seq, type, at, data, tx::text AS tx, pos, agent, examined
FROM (
  SELECT run_id, seq, type, at, data, tx, pos, agent, 0::bigint AS examined FROM matched
  UNION ALL
  SELECT * FROM (
    SELECT NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, tx, pos, NULL::text,
           (SELECT count(*) FROM examined)
    FROM examined ORDER BY tx DESC, pos DESC LIMIT 1
  ) last_examined
) page
ORDER BY tx, pos, examined
