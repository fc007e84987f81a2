// The shared space of a run's tree for the sandbox mount, read from the store: the root is found the
// way ctx.shared finds it (parent links within the run's tenant). Fails closed: a run the store does
// not know, or of another tenant, has no files.
import { SHARED_LIST_MAX_FILES } from '../domain/shared-space.ts';
import { rootRunOf } from '../store/run-tree-root.ts';
import type { Store } from '../store/store.ts';
import type { SharedSpaceReader } from './shared-mount.ts';

export function sharedSpaceFrom(
  store: Pick<Store, 'getRun' | 'listSharedFiles' | 'readSharedFile'>,
): SharedSpaceReader {
  return {
    async list(tenantId, runId) {
      const run = await store.getRun(runId);
      if (run === null || run.tenantId !== tenantId) return { rootRunId: '', files: [] };
      const rootRunId = await rootRunOf(store, run);
      return {
        rootRunId,
        files: await store.listSharedFiles(rootRunId, '', SHARED_LIST_MAX_FILES),
      };
    },
    read: (rootRunId, path) => store.readSharedFile(rootRunId, path),
  };
}
