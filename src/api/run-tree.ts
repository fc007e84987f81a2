// A run's tree as the API shows it (GET /v1/runs/:id/tree, the embedded client's runs.tree): the
// run and its descendants, breadth first, each with its status, agent, parent, depth and parent-end
// policy. Tenant-scoped (another tenant's run is run_not_found) and limited; it never writes.
import type { TenantRecord } from '../domain/records.ts';
import type { RunTreeNode, Store } from '../store/store.ts';
import { ownedRun } from './run-operations.ts';
import { RUN_TREE_LIMIT_DEFAULT } from './schemas.ts';

export async function readRunTree(
  store: Store,
  tenant: TenantRecord,
  id: string,
  limit: number = RUN_TREE_LIMIT_DEFAULT,
) {
  const root = await ownedRun(store, tenant, id);
  const nodes = await store.listRunTree(tenant.id, root.id, limit + 1);
  return {
    rootId: root.id,
    runs: nodes.slice(0, limit).map(nodeView),
    truncated: nodes.length > limit,
  };
}

function nodeView({ run, depth, onParentEnd }: RunTreeNode) {
  return {
    id: run.id,
    agent: run.agent,
    agentVersion: run.agentVersion,
    status: run.status,
    waitingReason: run.waitingReason,
    parentRunId: run.parentRunId,
    depth,
    onParentEnd,
    createdAt: new Date(run.createdAt).toISOString(),
    endedAt: run.endedAt === null ? null : new Date(run.endedAt).toISOString(),
  };
}
