-- The tenant's events after the cursor, in the tenant-wide order (0038: pos; one writer, so commit order), each with
-- its run's agent. Params: :tenant_id, :after_tx (always 0 here), :after_pos, :run_ids (JSON array of run ids, or
-- null), :agent (or null), :types (JSON array of event types, or null), :parent_run_id (or null), :limit.
SELECT e.run_id, e.seq, e.type, e.at, e.data, 0 AS tx, e.pos, r.agent
FROM events e JOIN runs r ON r.id = e.run_id
WHERE r.tenant_id = :tenant_id
  AND :after_tx >= 0
  AND e.pos > :after_pos
  AND (:run_ids IS NULL OR e.run_id IN (SELECT value FROM json_each(:run_ids)))
  AND (:agent IS NULL OR r.agent = :agent)
  AND (:types IS NULL OR e.type IN (SELECT value FROM json_each(:types)))
  AND (:parent_run_id IS NULL OR r.parent_run_id = :parent_run_id)
ORDER BY e.pos
LIMIT :limit
