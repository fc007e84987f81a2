// The API's view of the store with archived runs read back transparently: a run whose live journal
// or events retention removed gets them from its archive (chunks merged with what is still live)
// and carries its archive mark (`archived`, `archiveComplete`) into its view. Every other method
// is the store's own. Reads only; the engine keeps the plain store.
import type { Store } from '../store/store.ts';
import type { ArchiveReader } from './archive-reader.ts';

/**
 * Wraps a store for the API: getRun, loadJournal and listEvents consult the archive for ended runs.
 * The live rows are read first, the archive record after: rows are removed in the same transaction
 * that counts them in the record, so a read racing a prune still sees every position once.
 */
export function withArchiveReads(store: Store, reader: ArchiveReader): Store {
  const overrides: Partial<Store> = {
    async getRun(id) {
      const run = await store.getRun(id);
      if (run === null || run.endedAt === null) return run;
      const mark = await reader.mark(id);
      return mark === null ? run : { ...run, archive: { complete: mark.complete } };
    },
    async loadJournal(runId) {
      const live = await store.loadJournal(runId);
      return (await reader.mark(runId)) === null ? live : reader.journal(runId, live);
    },
    async listEvents(runId, afterSeq, limit) {
      const live = await store.listEvents(runId, afterSeq, limit);
      if ((await reader.mark(runId)) === null) return live;
      return reader.events(runId, live, afterSeq, limit);
    },
  };
  return new Proxy(store, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof Store];
      // The store itself as receiver: its getters (store areas) read its private fields.
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
