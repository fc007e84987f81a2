// Large payloads in and out of the store (issue 22): a store wrapper that, on the way in, replaces a
// run input, run output, effect argument or effect result whose JSON passes the inline threshold
// with a reference to a content-addressed payload (src/store/payload-io.ts), and on the way out
// resolves references back into values, so the engine, the API and replay never see one. Limits are
// enforced here, with typed errors: an oversize run input is refused (`result_too_large`, 413), an
// oversize effect result or output fails the run with that code in the same commit (never a lost
// write, never a 500). It never changes a value, only where its bytes live.
import { takeJsonText } from '../domain/json-text.ts';
import { jsonBytesUpTo } from '../domain/json-size.ts';
import { isKeelError, KeelError, serializeError } from '../domain/keel-error.ts';
import type { Json } from '../domain/json.ts';
import {
  asPayloadRef,
  looksLikePayloadRef,
  PAYLOAD_INLINE_MAX_BYTES_DEFAULT,
  PAYLOAD_STORED_MAX_BYTES_DEFAULT,
  payloadRefValue,
  RUN_PAYLOAD_MAX_BYTES_DEFAULT,
  type PayloadInfo,
} from '../domain/payload-ref.ts';
import type { JournalEntry, NewRun, RunEventRecord, RunRecord } from '../domain/records.ts';
import { describeText, readPayloadText, writePayload } from './payload-io.ts';
import type { CopyRunRequest, CreateRunResult, JournalWrite, RunCommit, Store } from './store.ts';

export interface PayloadLimits {
  /** JSON larger than this (bytes) is stored as a payload and referenced. */
  inlineMaxBytes: number;
  /** The largest payload stored (bytes): beyond it, `result_too_large`. */
  storedMaxBytes: number;
  /** The most payload bytes one run references (distinct payloads): beyond it, `run_payloads_too_large`. */
  runMaxBytes: number;
}

export const DEFAULT_PAYLOAD_LIMITS: PayloadLimits = {
  inlineMaxBytes: PAYLOAD_INLINE_MAX_BYTES_DEFAULT,
  storedMaxBytes: PAYLOAD_STORED_MAX_BYTES_DEFAULT,
  runMaxBytes: RUN_PAYLOAD_MAX_BYTES_DEFAULT,
};

/**
 * The value as a row should hold it: itself when small, else a reference to the payload it was
 * stored as (for `runId`). Throws `result_too_large` / `run_payloads_too_large`.
 */
export async function offloadValue<T extends Json | null | undefined>(
  store: Store,
  runId: string,
  value: T,
  limits: PayloadLimits,
  what: string,
): Promise<T | Json> {
  if (value === null || value === undefined || typeof value !== 'object') {
    if (typeof value !== 'string' || value.length <= limits.inlineMaxBytes / 3) return value;
  }
  const kept = takeJsonText(value);
  const mustStore = looksLikePayloadRef(value);
  if (!mustStore && jsonBytesUpTo(value, limits.inlineMaxBytes) <= limits.inlineMaxBytes)
    return value;
  let text: string | undefined = kept ?? JSON.stringify(value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.storedMaxBytes)
    throw new KeelError(
      'result_too_large',
      `${what} is ${bytes} bytes of JSON, above the largest stored payload of ${limits.storedMaxBytes}`,
      { details: { limitBytes: limits.storedMaxBytes, bytes } },
    );
  if (!mustStore && bytes <= limits.inlineMaxBytes) return value;
  const info: PayloadInfo = describeText(text);
  await writePayload(store, runId, text, info, limits.runMaxBytes);
  text = undefined; // the JSON text is garbage from here: only the caller's value stays alive
  return payloadRefValue(info);
}

/** The value a row holds, with a reference replaced by the stored value. */
export async function resolveValue<T>(store: Store, value: T): Promise<T> {
  const ref = asPayloadRef(value);
  if (ref === undefined) return value;
  return JSON.parse(await readPayloadText(store, ref.sha256)) as T;
}

const INNER = new WeakMap<Store, Store>();

/**
 * The store under the wrapper (rows as stored, references unresolved): for a reader that needs a
 * run's tenant without reading its 50 MB input (the payload download route).
 */
export const storeWithoutResolution = (store: Store): Store => INNER.get(store) ?? store;

/** Wraps `store` so that large values are stored as payloads and read back transparently. */
export function withPayloads(store: Store, limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS): Store {
  const offload = new PayloadOffload(store, limits);
  const overrides: Partial<Store> = {
    createRun: (run) => offload.createRun(run),
    copyRun: (request) => offload.copyRun(request),
    commit: (commit) => offload.commit(commit),
    getRun: async (id) => {
      const run = await store.getRun(id);
      return run === null ? null : offload.resolveRun(run);
    },
    listRuns: async (tenantId, filter) =>
      Promise.all((await store.listRuns(tenantId, filter)).map((r) => offload.resolveRun(r))),
    claimRuns: async (request) =>
      Promise.all((await store.claimRuns(request)).map((r) => offload.resolveRun(r))),
    loadJournal: async (runId) =>
      Promise.all((await store.loadJournal(runId)).map((e) => offload.resolveEntry(e))),
    loadJournalFrom: async (runId, fromSeq) =>
      Promise.all(
        (await store.loadJournalFrom(runId, fromSeq)).map((e) => offload.resolveEntry(e)),
      ),
    listEvents: async (runId, afterSeq, limit) =>
      Promise.all(
        (await store.listEvents(runId, afterSeq, limit)).map((e) => offload.resolveEvent(e)),
      ),
  };
  const wrapped = new Proxy(store, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof Store];
      // The store itself as receiver: its getters (store areas) read its private fields.
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  INNER.set(wrapped, store);
  return wrapped;
}

class PayloadOffload {
  readonly #store: Store;
  readonly #limits: PayloadLimits;

  constructor(store: Store, limits: PayloadLimits) {
    this.#store = store;
    this.#limits = limits;
  }

  #offload<T extends Json | null | undefined>(runId: string, value: T, what: string) {
    return offloadValue(this.#store, runId, value, this.#limits, what);
  }

  async createRun(run: NewRun): Promise<CreateRunResult> {
    const input = await this.#offload(run.id, run.input, `the input of run ${run.id}`);
    const created = await this.#store.createRun({ ...run, input: input as Json });
    return { ...created, run: await this.resolveRun(created.run) };
  }

  async copyRun(request: CopyRunRequest): Promise<CreateRunResult> {
    const { run } = request;
    const input = await this.#offload(run.id, run.input, `the input of run ${run.id}`);
    const copied = await this.#store.copyRun({ ...request, run: { ...run, input: input as Json } });
    // A reset copies journal rows as they are stored: the new run references their payloads too.
    for (const entry of await this.#store.loadJournal(copied.run.id))
      for (const value of [entry.args, entry.result]) {
        const ref = asPayloadRef(value);
        const info = ref === undefined ? null : await this.#store.getPayload(ref.sha256);
        if (info !== null)
          await this.#store.sealPayload(copied.run.id, info, this.#limits.runMaxBytes);
      }
    return { ...copied, run: await this.resolveRun(copied.run) };
  }

  /**
   * Stores the commit's large values first, then commits references. A value over a limit fails
   * the run in this same commit with the typed error: the live agent may have seen the value, so
   * the run cannot go on as if the journal held it.
   */
  async commit(c: RunCommit): Promise<import('./store.ts').CommitOutcome> {
    let failure: KeelError | undefined;
    const guard = async <T extends Json | null | undefined>(value: T, what: string) => {
      try {
        return await this.#offload(c.runId, value, what);
      } catch (error) {
        if (!isKeelError(error) || !LIMIT_CODES.has(error.code)) throw error;
        failure ??= error;
        return undefined;
      }
    };
    const journal: JournalWrite[] = [];
    for (const j of c.journal ?? []) {
      // A checkpoint stays inline: its state is bounded (CHECKPOINT_STATE_MAX_BYTES) and
      // Store.latestSnapshot reads it in one index probe, which a reference would defeat.
      if (j.kind === 'checkpoint') {
        journal.push(j);
        continue;
      }
      const what = `the ${j.kind} ${j.name} at position ${j.seq}`;
      const args = await guard(j.args, `the arguments of ${what}`);
      const result = await guard(j.result, `the result of ${what}`);
      journal.push({
        ...j,
        ...(j.args === undefined ? {} : { args: (args ?? null) as Json }),
        ...(j.result === undefined ? {} : { result: (result ?? null) as Json }),
      });
    }
    const runPatch = c.run === undefined ? undefined : { ...c.run };
    if (runPatch !== undefined && runPatch.result !== undefined)
      runPatch.result = ((await guard(runPatch.result, `the output of run ${c.runId}`)) ??
        null) as Json;
    const createRuns: NewRun[] = [];
    for (const child of c.createRuns ?? [])
      createRuns.push({
        ...child,
        input: ((await guard(child.input, `the input of run ${child.id}`)) ?? null) as Json,
      });
    const events = [];
    for (const event of c.events ?? []) {
      const data = event.data;
      if (data !== null && typeof data === 'object' && !Array.isArray(data) && 'result' in data) {
        const result = await guard(data.result, `the output of run ${c.runId}`);
        events.push({ ...event, data: { ...data, result: (result ?? null) as Json } });
      } else events.push(event);
    }
    if (failure !== undefined) return this.#store.commit(failedCommit(c, journal, failure));
    return this.#store.commit({
      ...c,
      ...(c.journal === undefined ? {} : { journal }),
      ...(runPatch === undefined ? {} : { run: runPatch }),
      ...(c.createRuns === undefined ? {} : { createRuns }),
      ...(c.events === undefined ? {} : { events }),
    });
  }

  async resolveRun(run: RunRecord): Promise<RunRecord> {
    if (asPayloadRef(run.input) === undefined && asPayloadRef(run.result) === undefined) return run;
    return {
      ...run,
      input: await resolveValue(this.#store, run.input),
      result: await resolveValue(this.#store, run.result),
    };
  }

  async resolveEntry(entry: JournalEntry): Promise<JournalEntry> {
    if (asPayloadRef(entry.args) === undefined && asPayloadRef(entry.result) === undefined)
      return entry;
    return {
      ...entry,
      args: await resolveValue(this.#store, entry.args),
      result: await resolveValue(this.#store, entry.result),
    };
  }

  async resolveEvent(event: RunEventRecord): Promise<RunEventRecord> {
    const data = event.data;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return event;
    if (asPayloadRef(data.result) === undefined) return event;
    const result = (await resolveValue(this.#store, data.result)) as Json;
    return { ...event, data: { ...data, result } };
  }
}

const LIMIT_CODES: ReadonlySet<string> = new Set(['result_too_large', 'run_payloads_too_large']);

/**
 * The commit that ends the run with `error` instead: the journal entries whose values did not fit
 * are written failed with it (the others as they were), the run fails, its lease is released.
 */
function failedCommit(c: RunCommit, journal: JournalWrite[], error: KeelError): RunCommit {
  const serialized = serializeError(error, 'internal');
  return {
    runId: c.runId,
    leaseToken: c.leaseToken,
    expectedStateVersion: c.expectedStateVersion,
    journal: journal.map((j) =>
      (j.result === null && (c.journal ?? []).find((o) => o.seq === j.seq)?.result != null) ||
      (j.args === null && (c.journal ?? []).find((o) => o.seq === j.seq)?.args != null)
        ? { ...j, status: 'failed', result: null, error: serialized }
        : j,
    ),
    run: {
      status: 'failed',
      error: serialized,
      releaseLease: true,
      waitingReason: null,
      wakeAt: null,
      ...(c.run?.counters === undefined ? {} : { counters: c.run.counters }),
    },
    events: [
      { type: 'run.failed', data: { status: 'failed', error: serialized as unknown as Json } },
    ],
    ...(c.wakeRuns === undefined ? {} : { wakeRuns: c.wakeRuns }),
    ...(c.cancelRuns === undefined ? {} : { cancelRuns: c.cancelRuns }),
  };
}
