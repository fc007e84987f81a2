// One stream for many runs: the tenant's events in the tenant-wide order (domain/event-cursor.ts),
// filtered, from a cursor on, for as long as the reader wants them. Used by GET /v1/events and by
// the embedded client's follow(). Woken by the event hub (which hears other processes' commits
// through the store's change feed), with a re-read shortly after each wake (an event held back
// behind another process's transaction still in flight is read once that one ends, even if nothing
// announces it) and a slow poll as a backstop. Reads a page only when the reader has taken the last
// one, so a slow reader holds at most one page: memory does not grow with its lag.
import type { EventCursor, TenantEventFilter, TenantEventRecord } from '../domain/event-cursor.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TenantRecord } from '../domain/records.ts';
import type { Store } from '../store/store.ts';
import type { EventHub } from './event-hub.ts';
import { redactEventView } from './redaction.ts';
import { eventView } from './views.ts';
import { encodeEventCursor } from '../domain/event-cursor.ts';

/** Events one read of the tenant's stream takes at most. */
export const TENANT_STREAM_PAGE_MAX_EVENTS = 500;
/** Runs one stream may name in its `runIds` filter. */
export const TENANT_STREAM_RUN_IDS_MAX = 100;
/** After a wake, the stream reads again this much later (events held back by a transaction in flight). */
export const TENANT_STREAM_RECHECK_MS = 250;
/** With no wake at all, the stream still reads this often (a lost change notification). */
export const TENANT_STREAM_POLL_MS = 5_000;
/**
 * Reads of one stream start at least this far apart while it keeps being woken (unless the last
 * read stopped at its bound): with thousands of runs changing, every stream would otherwise read
 * back to back, one store read per stream always in flight. Wakes in between coalesce into the
 * next read; an event waits at most this much longer.
 */
export const TENANT_STREAM_READ_GAP_MS = 100;

/** One event of the tenant's stream as the API shows it (redacted by the tenant's policy). */
export function tenantEventView(event: TenantEventRecord, tenant: TenantRecord) {
  return {
    cursor: encodeEventCursor(event.cursor),
    runId: event.runId,
    agent: event.agent,
    ...redactEventView(eventView(event), tenant.redact),
  };
}

/**
 * The tenant's events matching `filter` after `after`, in order, until `signal` aborts. The
 * generator reads the next page only when the consumer asks for the next event.
 */
export async function* followTenantEvents(
  store: Store,
  hub: EventHub,
  tenant: TenantRecord,
  filter: TenantEventFilter,
  after: EventCursor,
  signal: AbortSignal,
): AsyncGenerator<TenantEventRecord, void, undefined> {
  let cursor = after;
  let changed = true;
  let lastReadAt = 0;
  let backlog = false;
  let recheck = false;
  let wake: (() => void) | undefined;
  let recheckTimer: NodeJS.Timeout | undefined;
  const poke = (): void => {
    changed = true;
    wake?.();
  };
  const unsubscribe = hub.subscribeAll(() => {
    recheck = true;
    poke();
  });
  const poll = setInterval(poke, TENANT_STREAM_POLL_MS);
  signal.addEventListener('abort', poke, { once: true });
  try {
    while (!signal.aborted) {
      if (!changed) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (signal.aborted) break;
      const gap = lastReadAt + TENANT_STREAM_READ_GAP_MS - Date.now();
      if (gap > 0 && !backlog) {
        await sleep(gap, undefined, { signal }).catch(() => {});
        if (signal.aborted) break;
      }
      changed = false;
      lastReadAt = Date.now();
      if (recheck) {
        recheck = false;
        clearTimeout(recheckTimer);
        recheckTimer = setTimeout(poke, TENANT_STREAM_RECHECK_MS);
      }
      const page = await store.listTenantEvents(
        tenant.id,
        filter,
        cursor,
        TENANT_STREAM_PAGE_MAX_EVENTS,
      );
      for (const event of page.events) {
        if (signal.aborted) return;
        yield event;
      }
      // Past what the read examined too (other tenants' events, filtered ones): the next read
      // never examines them again.
      cursor = page.cursor;
      backlog = page.more;
      if (page.more) changed = true;
    }
  } finally {
    clearTimeout(recheckTimer);
    clearInterval(poll);
    signal.removeEventListener('abort', poke);
    unsubscribe();
  }
}
