// KeelRuns inside the caller's process: the same interface as keel/client's HTTP transport
// (src/client/keel-runs.ts), served by the same operations as the HTTP routes
// (src/api/run-operations.ts) on the embedded runtime's store, with no HTTP in between. Requests
// are checked by the API's own schemas; failures are the client's typed errors (KeelApiError with
// the API's code and status), so code written against one transport runs on the other.
import type { z } from 'zod';
import type { EventHub } from '../api/event-hub.ts';
import {
  answerInput,
  cancelRun,
  copyRun,
  followEvents,
  journalStep,
  journalSteps,
  listRunsPage,
  ownedRun,
  readmitRun,
  readRun,
  resolveExecution,
  runAttempts,
  type RunOperationsDeps,
  shownRun,
  storedEvents,
  submitRun,
} from '../api/run-operations.ts';
import { RESULT_WAIT_MAX_MS, waitForTerminal } from '../api/run-result-wait.ts';
import { EVENTS_JSON_MAX_EVENTS } from '../api/routes/events.ts';
import { redactEventView } from '../api/redaction.ts';
import {
  CancelBody,
  CreateRunBody,
  ForkBody,
  InputBody,
  ListRunsQuery,
  RerunBody,
  ResetBody,
  ResolveBody,
  RunTreeQuery,
} from '../api/schemas.ts';
import { eventView, runView } from '../api/views.ts';
import { readRunTree } from '../api/run-tree.ts';
import { KeelApiError, KeelWaitTimeoutError } from '../client/errors.ts';
import { listAllRuns } from '../client/list-all.ts';
import { followRuns, waitForRuns, type OpenTenantStream } from '../client/follow-runs.ts';
import { checkBatchSize, submitRuns } from '../api/run-batch.ts';
import { followTenantEvents, tenantEventView } from '../api/tenant-events.ts';
import { EVENT_CURSOR_START } from '../domain/event-cursor.ts';
import type { BatchRunResult, TenantEvent } from '../client/types.ts';
import type {
  CallOptions,
  CancelOptions,
  CreateOptions,
  EventsOptions,
  KeelRuns,
  ListEventsOptions,
  ResultOptions,
  WaitOptions,
} from '../client/keel-runs.ts';
import type {
  Attempt,
  RunTree,
  CreateRunRequest,
  ForkRequest,
  ListRunsFilter,
  ModelDelta,
  RerunRequest,
  ResetRequest,
  Resolution,
  Run,
  RunEvent,
  RunOutcome,
  RunPage,
  Step,
  ToolOutput,
} from '../client/types.ts';
import { ERROR_CODES } from '../domain/error-codes.ts';
import type { Json } from '../domain/json.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import type { TenantRecord } from '../domain/records.ts';
import { isTerminal } from '../domain/run-status.ts';
import type { LiveDeltas } from '../models/live-deltas.ts';

export interface EmbeddedRunsDeps extends RunOperationsDeps {
  tenant: TenantRecord;
  hub: EventHub;
  live: LiveDeltas;
  /** Aborts when the runtime closes: pending waits answer and event iterators end. */
  closing: AbortSignal;
  stepPreviewMaxBytes: number;
  /** Most runs one createMany may hold (KEEL_BATCH_RUNS_MAX). */
  batchRunsMax: number;
}

/** A KeelError as the client's KeelApiError (the status the HTTP API would answer with). */
function asApiError(error: unknown): unknown {
  if (!isKeelError(error)) return error;
  return new KeelApiError({
    status: ERROR_CODES[error.code].status,
    code: error.code,
    message: error.message,
    details: error.details,
    retryAfterMs: error.retryAfterMs,
  });
}

/** Runs `operation`, its KeelErrors thrown as KeelApiErrors. */
async function call<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw asApiError(error);
  }
}

/** The request checked by the API's schema: 400 validation_failed with the issues, as over HTTP. */
function parsed<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new KeelError('validation_failed', `invalid ${what}: ${result.error.message}`, {
    details: {
      issues: result.error.issues.map((issue) => ({
        path: `/${issue.path.join('/')}`,
        message: issue.message,
      })),
    },
  });
}

/** A view of the API as the client's type (the API's views are the client's wire shapes). */
const wire = <T>(view: unknown): T => view as T;

export class EmbeddedRuns implements KeelRuns {
  readonly #deps: EmbeddedRunsDeps;

  constructor(deps: EmbeddedRunsDeps) {
    this.#deps = deps;
  }

  #signal(options: CallOptions): AbortSignal {
    return options.signal === undefined
      ? this.#deps.closing
      : AbortSignal.any([options.signal, this.#deps.closing]);
  }

  create(request: CreateRunRequest, _options: CallOptions = {}): Promise<Run> {
    return call(async () => {
      const body = parsed(CreateRunBody, request, 'run');
      const { run } = await submitRun(this.#deps, this.#deps.tenant, body);
      return wire<Run>(shownRun(run, this.#deps.tenant));
    });
  }

  createAndWait(request: CreateRunRequest, options: CreateOptions): Promise<RunOutcome> {
    return call(async () => {
      const body = parsed(CreateRunBody, request, 'run');
      const { run } = await submitRun(this.#deps, this.#deps.tenant, body);
      const waitMs = Math.max(0, options.waitMs ?? 0);
      const latest = isTerminal(run.status)
        ? run
        : ((await this.#waitOnce(run.id, waitMs, options)) ?? run);
      return {
        done: isTerminal(latest.status),
        run: wire<Run>(shownRun(latest, this.#deps.tenant)),
      };
    });
  }

  /** The run once terminal, or as it stands after `waitMs` (in long-polls of the HTTP bound). */
  async #waitOnce(id: string, waitMs: number, options: CallOptions) {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const left = Math.max(0, deadline - Date.now());
      const run = await waitForTerminal(
        this.#deps.store,
        this.#deps.hub,
        id,
        Math.min(left, RESULT_WAIT_MAX_MS),
        this.#signal(options),
      );
      if (run === null || isTerminal(run.status) || Date.now() >= deadline) return run;
      if (this.#signal(options).aborted) return run;
    }
  }

  get(id: string, _options: CallOptions = {}): Promise<Run> {
    return call(async () => wire<Run>(await readRun(this.#deps, this.#deps.tenant, id)));
  }

  list(filter: ListRunsFilter = {}, _options: CallOptions = {}): Promise<RunPage> {
    return call(async () => {
      const query = parsed(ListRunsQuery, filter, 'filter');
      return wire<RunPage>(await listRunsPage(this.#deps, this.#deps.tenant, query));
    });
  }

  listAll(
    filter: Omit<ListRunsFilter, 'cursor'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<Run, void, undefined> {
    return listAllRuns((f, o) => this.list(f, o), filter, options);
  }

  result(id: string, options: ResultOptions = {}): Promise<RunOutcome> {
    return call(async () => {
      await ownedRun(this.#deps.store, this.#deps.tenant, id);
      const run = await this.#waitOnce(id, Math.max(0, options.waitMs ?? 0), options);
      if (run === null) throw new KeelError('run_not_found', `run ${id} not found`);
      return { done: isTerminal(run.status), run: wire<Run>(shownRun(run, this.#deps.tenant)) };
    });
  }

  async wait(id: string, options: WaitOptions = {}): Promise<Run> {
    for (;;) {
      const outcome = await this.result(id, {
        waitMs: options.timeoutMs ?? RESULT_WAIT_MAX_MS,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (outcome.done) return outcome.run;
      options.signal?.throwIfAborted();
      if (options.timeoutMs !== undefined || this.#deps.closing.aborted)
        throw new KeelWaitTimeoutError(id, options.timeoutMs ?? 0);
    }
  }

  async *events(
    id: string,
    options: EventsOptions = {},
  ): AsyncGenerator<RunEvent, void, undefined> {
    const { store, hub, live, tenant } = this.#deps;
    await call(() => ownedRun(store, tenant, id));
    const { onModelDelta, onToolOutput } = options;
    const unsubscribeLive =
      onModelDelta === undefined && onToolOutput === undefined
        ? undefined
        : live.subscribe(id, (event) => {
            if (event.type === 'model.delta') onModelDelta?.(event.data as unknown as ModelDelta);
            else onToolOutput?.(event.data as unknown as ToolOutput);
          });
    options.onConnect?.();
    try {
      const signal = this.#signal(options);
      for await (const event of followEvents(store, hub, id, options.after ?? 0, signal))
        yield wire<RunEvent>(redactEventView(eventView(event), tenant.redact));
    } finally {
      unsubscribeLive?.();
    }
  }

  listEvents(id: string, options: ListEventsOptions = {}): Promise<RunEvent[]> {
    const limit = options.limit ?? EVENTS_JSON_MAX_EVENTS;
    return call(async () =>
      wire<RunEvent[]>(
        await storedEvents(this.#deps.store, this.#deps.tenant, id, options.after ?? 0, limit),
      ),
    );
  }

  sendInput(id: string, key: string, value: unknown, _options: CallOptions = {}): Promise<Run> {
    return call(async () => {
      const body = parsed(InputBody, { key, value }, 'input');
      const { store, tenant } = this.#deps;
      return wire<Run>(await answerInput(store, tenant, id, body.key, body.value as Json));
    });
  }

  cancel(id: string, options: CancelOptions = {}): Promise<Run> {
    return call(async () => {
      const body = parsed(CancelBody, { graceMs: options.graceMs }, 'cancel');
      return wire<Run>(await cancelRun(this.#deps.store, this.#deps.tenant, id, body));
    });
  }

  retry(id: string, _options: CallOptions = {}): Promise<Run> {
    return call(async () => wire<Run>(await readmitRun(this.#deps.store, this.#deps.tenant, id)));
  }

  resolve(
    id: string,
    executionId: string,
    resolution: Resolution,
    _options: CallOptions = {},
  ): Promise<Run> {
    return call(async () => {
      const body = parsed(ResolveBody, resolution, 'resolution');
      const { store, tenant } = this.#deps;
      return wire<Run>(await resolveExecution(store, tenant, id, executionId, body));
    });
  }

  rerun(id: string, request: RerunRequest = {}, _options: CallOptions = {}): Promise<Run> {
    return call(async () => {
      const body = parsed(RerunBody, request, 'rerun');
      return this.#copy(id, {
        op: 'rerun',
        position: undefined,
        input: undefined,
        agentVersion: undefined,
        idempotencyKey: body.idempotencyKey,
      });
    });
  }

  reset(id: string, request: ResetRequest, _options: CallOptions = {}): Promise<Run> {
    return call(async () => {
      const body = parsed(ResetBody, request, 'reset');
      return this.#copy(id, {
        op: 'reset',
        position: body.position,
        input: undefined,
        agentVersion: undefined,
        idempotencyKey: body.idempotencyKey,
      });
    });
  }

  fork(id: string, request: ForkRequest, _options: CallOptions = {}): Promise<Run> {
    return call(async () => {
      const body = parsed(ForkBody, request, 'fork');
      return this.#copy(id, {
        op: 'fork',
        position: body.position,
        input: 'input' in body ? ((body.input ?? null) as Json) : undefined,
        agentVersion: body.agentVersion,
        idempotencyKey: body.idempotencyKey,
      });
    });
  }

  async #copy(id: string, ask: Parameters<typeof copyRun>[3]): Promise<Run> {
    const { run } = await copyRun(this.#deps, this.#deps.tenant, id, ask);
    return wire<Run>(runView(run));
  }

  steps(id: string, options: CallOptions & { io?: boolean } = {}): Promise<Step[]> {
    const { store, tenant, stepPreviewMaxBytes } = this.#deps;
    return call(async () =>
      wire<Step[]>(
        await journalSteps(store, tenant, id, options.io !== false, stepPreviewMaxBytes),
      ),
    );
  }

  step(id: string, seq: number, _options: CallOptions = {}): Promise<Step> {
    return call(async () =>
      wire<Step>(await journalStep(this.#deps.store, this.#deps.tenant, id, seq)),
    );
  }

  attempts(id: string, _options: CallOptions = {}): Promise<Attempt[]> {
    return call(async () =>
      wire<Attempt[]>(await runAttempts(this.#deps.store, this.#deps.tenant, id)),
    );
  }

  createMany(
    requests: readonly CreateRunRequest[],
    _options: CallOptions = {},
  ): Promise<BatchRunResult[]> {
    return call(async () => {
      checkBatchSize(requests.length, this.#deps.batchRunsMax);
      return wire<BatchRunResult[]>(await submitRuns(this.#deps, this.#deps.tenant, requests));
    });
  }

  follow(runIds: readonly string[], options: CallOptions = {}): AsyncIterable<TenantEvent> {
    return followRuns(this.#open, runIds, options);
  }

  waitMany(runIds: readonly string[], options: WaitOptions = {}): Promise<Run[]> {
    return waitForRuns(this.#open, (id, o) => this.get(id, o), runIds, options);
  }

  readonly #open: OpenTenantStream = (filter, signal) => {
    const { store, hub, tenant } = this.#deps;
    const events = followTenantEvents(
      store,
      hub,
      tenant,
      filter,
      EVENT_CURSOR_START,
      this.#signal(signal === undefined ? {} : { signal }),
    );
    return (async function* () {
      for await (const event of events) yield wire<TenantEvent>(tenantEventView(event, tenant));
    })();
  };

  tree(id: string, options: CallOptions & { limit?: number } = {}): Promise<RunTree> {
    return call(async () => {
      const { limit } = parsed(RunTreeQuery, { limit: options.limit }, 'options');
      return wire<RunTree>(await readRunTree(this.#deps.store, this.#deps.tenant, id, limit));
    });
  }
}
