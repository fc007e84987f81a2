-- The tenant's events after the cursor, in the tenant-wide order (0038: pos; one writer, so commit order), each with
-- its run's agent, among at most :examine events of all tenants after the cursor; then one marker row (examined > 0:
-- how many were examined) at the place of the last one examined, where the next read starts when fewer than :limit
-- events came back. Params: :tenant_id, :after_tx (always 0 here), :after_pos, :run_ids (JSON array of run ids, or
-- null), :agent (or null), :types (JSON array of event types, or null), :parent_run_id (or null), :limit, :examine,
-- :horizon (unused: with one writer every committed event is readable).
WITH examined AS (
  SELECT e.run_id, e.seq, e.type, e.at, e.data, e.pos
  FROM events e
  WHERE :after_tx >= 0 AND :horizon IS NOT NULL AND e.pos > :after_pos
  ORDER BY e.pos
  LIMIT :examine
), matched AS (
  SELECT x.run_id, x.seq, x.type, x.at, x.data, x.pos, r.agent
  FROM examined x JOIN runs r ON r.id = x.run_id
  WHERE r.tenant_id = :tenant_id
    AND (:run_ids IS NULL OR x.run_id IN (SELECT value FROM json_each(:run_ids)))
    AND (:agent IS NULL OR r.agent = :agent)
    AND (:types IS NULL OR x.type IN (SELECT value FROM json_each(:types)))
    AND (:parent_run_id IS NULL OR r.parent_run_id = :parent_run_id)
  ORDER BY x.pos
  LIMIT :limit
)
SELECT * FROM (
  SELECT run_id, seq, type, at, data, 0 AS tx, pos, agent, 0 AS examined FROM matched
  UNION ALL
  SELECT * FROM (
    SELECT NULL, NULL, NULL, NULL, NULL, 0, pos, NULL, (SELECT count(*) FROM examined)
    FROM examined ORDER BY pos DESC LIMIT 1
  )
)
ORDER BY pos, examined
