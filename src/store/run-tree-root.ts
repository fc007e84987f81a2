// The root of a run's tree, which keys the tree's shared space: the run its parent links lead to,
// within the run's tenant. Read through the store interface (ctx.shared, the operator routes and the
// sandbox mount all find it the same way); lineage never changes, so answers are cached (bounded).
import type { RunRecord } from '../domain/records.ts';
import { RUN_TREE_DEPTH_MAX } from '../domain/shared-space.ts';
import type { Store } from './store.ts';

/** Root run ids by run id: a run's lineage never changes (bounded: a cache, not a registry). */
const roots = new Map<string, string>();
const ROOT_CACHE_MAX_ENTRIES = 10_000;

/**
 * The root of a run's tree: the run its parent links lead to. Only runs of the run's own tenant
 * are followed, so a tree never reaches another tenant's space.
 */
export async function rootRunOf(store: Pick<Store, 'getRun'>, run: RunRecord): Promise<string> {
  const cached = roots.get(run.id);
  if (cached !== undefined) return cached;
  let current = run;
  for (let depth = 0; current.parentRunId !== null; depth++) {
    if (depth >= RUN_TREE_DEPTH_MAX)
      throw new Error(`run ${run.id} has more than ${RUN_TREE_DEPTH_MAX} ancestors`);
    const parent = await store.getRun(current.parentRunId);
    if (parent === null || parent.tenantId !== run.tenantId) break;
    current = parent;
  }
  if (roots.size >= ROOT_CACHE_MAX_ENTRIES) roots.clear();
  roots.set(run.id, current.id);
  return current.id;
}
