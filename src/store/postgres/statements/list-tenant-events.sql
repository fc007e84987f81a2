-- The tenant's events after the cursor (:after_tx, :after_pos), in the tenant-wide order (0038), each with its run's
-- agent. Only transactions that have ended (tx below this snapshot's xmin) are read, so no event committed later can
-- sort before the last one returned. Params: :tenant_id, :after_tx (xid8 as text), :after_pos, :run_ids (JSON array
-- of run ids, or null), :agent (or null), :types (JSON array of event types, or null), :parent_run_id (or null),
-- :limit.
SELECT e.run_id, e.seq, e.type, e.at, e.data, e.tx::text AS tx, e.pos, r.agent
FROM events e JOIN runs r ON r.id = e.run_id
WHERE r.tenant_id = :tenant_id
  AND (e.tx, e.pos) > (:after_tx::text::xid8, :after_pos::bigint)
  AND e.tx < pg_snapshot_xmin(pg_current_snapshot())
  AND (:run_ids::jsonb IS NULL OR e.run_id IN (SELECT jsonb_array_elements_text(:run_ids::jsonb)))
  AND (:agent::text IS NULL OR r.agent = :agent::text)
  AND (:types::jsonb IS NULL OR e.type IN (SELECT jsonb_array_elements_text(:types::jsonb)))
  AND (:parent_run_id::text IS NULL OR r.parent_run_id = :parent_run_id::text)
ORDER BY e.tx, e.pos
LIMIT :limit
