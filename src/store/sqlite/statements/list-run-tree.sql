-- A run of the tenant and its descendants, breadth first (depth, then id): depth 0 is the root, then its children,
-- their children and so on, down to :max_depth; on_parent_end is the policy the parent's journal gave each child
-- (cancel by default; NULL for the root); a child its parent's journal does not hold (one started through the API
-- with the parent's delegated token) has its own on_parent_end column (0037), detach when that is NULL (created before).
-- Params: :tenant_id, :root_id, :max_depth, :limit. Returns run rows with tree_depth and tree_on_parent_end; none when the
-- root is not the tenant's.
WITH RECURSIVE tree(id, depth) AS (
  SELECT id, 0 FROM runs WHERE id = :root_id AND tenant_id = :tenant_id
  UNION ALL
  SELECT r.id, t.depth + 1 FROM runs r JOIN tree t ON r.parent_run_id = t.id WHERE t.depth < :max_depth
)
SELECT runs.*, tree.depth AS tree_depth,
  COALESCE(
    (SELECT COALESCE(json_extract(j.args, '$.onParentEnd'), 'cancel') FROM journal j
     WHERE j.run_id = runs.parent_run_id AND j.kind = 'child' AND json_extract(j.args, '$.childRunId') = runs.id
     LIMIT 1),
    runs.on_parent_end,
    CASE WHEN runs.parent_run_id IS NULL THEN NULL ELSE 'detach' END) AS tree_on_parent_end
FROM tree JOIN runs ON runs.id = tree.id
ORDER BY tree.depth, runs.id
LIMIT :limit
