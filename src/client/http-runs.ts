// KeelRuns over HTTP: each operation is one `/v1/runs` request (or a long-poll loop for wait(), an
// SSE stream for events()). Answers are Keel's own JSON; failures are the typed errors of
// errors.ts. Browser-safe.
import { backoffDelayMs } from '../domain/backoff.ts';
import { isTransientError, KeelProtocolError, KeelWaitTimeoutError } from './errors.ts';
import type { HttpTransport } from './http-transport.ts';
import { sleep } from './sleep.ts';
import type {
  CallOptions,
  CancelOptions,
  CreateOptions,
  EventsOptions,
  KeelRuns,
  ListEventsOptions,
  ResultOptions,
  WaitOptions,
} from './keel-runs.ts';
import { followRunEvents } from './run-event-stream.ts';
import { listAllRuns } from './list-all.ts';
import { followRuns, waitForRuns, type OpenTenantStream } from './follow-runs.ts';
import { streamTenantEvents } from './tenant-event-stream.ts';
import type {
  Attempt,
  BatchRunResult,
  TenantEvent,
  RunTree,
  CreateRunRequest,
  ForkRequest,
  ListRunsFilter,
  RerunRequest,
  ResetRequest,
  Resolution,
  Run,
  RunEvent,
  RunOutcome,
  RunPage,
  Step,
} from './types.ts';
import { isTerminalStatus } from './types.ts';

/** The server's bound on one long-poll (GET /v1/runs/:id/result?waitMs=), in ms. */
export const RESULT_WAIT_MAX_MS = 55_000;
/** wait(): consecutive transient failures (Keel restarting, say) tolerated before giving up. */
export const WAIT_MAX_TRANSIENT_FAILURES = 8;
export { LIST_ALL_MAX_PAGES } from './list-all.ts';

const run = (id: string): string => `/v1/runs/${encodeURIComponent(id)}`;

export class HttpRuns implements KeelRuns {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  create(request: CreateRunRequest, options: CallOptions = {}): Promise<Run> {
    return this.#http.json<Run>('POST', '/v1/runs', { body: request, signal: options.signal });
  }

  async createAndWait(request: CreateRunRequest, options: CreateOptions): Promise<RunOutcome> {
    const waitMs = Math.min(Math.max(0, options.waitMs ?? 0), RESULT_WAIT_MAX_MS);
    const answer = await this.#http.call<Run>('POST', '/v1/runs', {
      body: request,
      query: { wait: waitMs },
      signal: options.signal,
      extraTimeoutMs: waitMs,
    });
    return {
      done: answer.status !== 202 && isTerminalStatus(answer.body.status),
      run: answer.body,
    };
  }

  get(id: string, options: CallOptions = {}): Promise<Run> {
    return this.#http.json<Run>('GET', run(id), { signal: options.signal });
  }

  list(filter: ListRunsFilter = {}, options: CallOptions = {}): Promise<RunPage> {
    return this.#http.json<RunPage>('GET', '/v1/runs', {
      query: { ...filter },
      signal: options.signal,
    });
  }

  listAll(
    filter: Omit<ListRunsFilter, 'cursor'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<Run, void, undefined> {
    return listAllRuns((f, o) => this.list(f, o), filter, options);
  }

  async result(id: string, options: ResultOptions = {}): Promise<RunOutcome> {
    const waitMs = Math.min(Math.max(0, options.waitMs ?? 0), RESULT_WAIT_MAX_MS);
    const answer = await this.#http.call<Run>('GET', `${run(id)}/result`, {
      query: { waitMs },
      signal: options.signal,
      extraTimeoutMs: waitMs,
    });
    return { done: answer.status === 200, run: answer.body };
  }

  async wait(id: string, options: WaitOptions = {}): Promise<Run> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    let failures = 0;
    for (;;) {
      const left = deadline - Date.now();
      try {
        const outcome = await this.result(id, {
          waitMs: Math.max(0, Math.min(left, RESULT_WAIT_MAX_MS)),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        failures = 0;
        if (outcome.done) return outcome.run;
      } catch (error) {
        if (options.signal?.aborted || !isTransientError(error)) throw error;
        failures += 1;
        if (failures > WAIT_MAX_TRANSIENT_FAILURES) throw error;
        await sleep(
          backoffDelayMs(
            { initialDelayMs: 250, maxDelayMs: 10_000, multiplier: 2, jitter: 'equal' },
            failures,
          ),
          options.signal,
        );
      }
      if (Date.now() >= deadline) throw new KeelWaitTimeoutError(id, options.timeoutMs ?? 0);
    }
  }

  events(id: string, options: EventsOptions = {}): AsyncIterable<RunEvent> {
    return followRunEvents(this.#http, id, options);
  }

  listEvents(id: string, options: ListEventsOptions = {}): Promise<RunEvent[]> {
    return this.#http.json<RunEvent[]>('GET', `${run(id)}/events`, {
      query: { format: 'json', after: options.after, limit: options.limit },
      signal: options.signal,
    });
  }

  sendInput(id: string, key: string, value: unknown, options: CallOptions = {}): Promise<Run> {
    return this.#http.json<Run>('POST', `${run(id)}/input`, {
      body: { key, value },
      signal: options.signal,
    });
  }

  cancel(id: string, options: CancelOptions = {}): Promise<Run> {
    return this.#http.json<Run>('POST', `${run(id)}/cancel`, {
      body: options.graceMs === undefined ? {} : { graceMs: options.graceMs },
      signal: options.signal,
    });
  }

  retry(id: string, options: CallOptions = {}): Promise<Run> {
    return this.#http.json<Run>('POST', `${run(id)}/retry`, { body: {}, signal: options.signal });
  }

  resolve(
    id: string,
    executionId: string,
    resolution: Resolution,
    options: CallOptions = {},
  ): Promise<Run> {
    const path = `${run(id)}/executions/${encodeURIComponent(executionId)}/resolve`;
    return this.#http.json<Run>('POST', path, { body: resolution, signal: options.signal });
  }

  rerun(id: string, request: RerunRequest = {}, options: CallOptions = {}): Promise<Run> {
    return this.#http.json<Run>('POST', `${run(id)}/rerun`, {
      body: request,
      signal: options.signal,
    });
  }

  reset(id: string, request: ResetRequest, options: CallOptions = {}): Promise<Run> {
    return this.#http.json<Run>('POST', `${run(id)}/reset`, {
      body: request,
      signal: options.signal,
    });
  }

  fork(id: string, request: ForkRequest, options: CallOptions = {}): Promise<Run> {
    return this.#http.json<Run>('POST', `${run(id)}/fork`, {
      body: request,
      signal: options.signal,
    });
  }

  async steps(id: string, options: CallOptions & { io?: boolean } = {}): Promise<Step[]> {
    const body = await this.#http.json<{ steps?: Step[] }>('GET', `${run(id)}/steps`, {
      query: { io: options.io === false ? 'false' : undefined },
      signal: options.signal,
    });
    if (!Array.isArray(body?.steps))
      throw new KeelProtocolError(`GET ${run(id)}/steps did not answer with { steps: [...] }`);
    return body.steps;
  }

  async step(id: string, seq: number, options: CallOptions = {}): Promise<Step> {
    const body = await this.#http.json<{ step?: Step }>('GET', `${run(id)}/steps/${seq}`, {
      signal: options.signal,
    });
    if (typeof body?.step !== 'object' || body.step === null)
      throw new KeelProtocolError(`GET ${run(id)}/steps/${seq} did not answer with { step }`);
    return body.step;
  }

  async attempts(id: string, options: CallOptions = {}): Promise<Attempt[]> {
    const body = await this.#http.json<{ attempts?: Attempt[] }>('GET', `${run(id)}/attempts`, {
      signal: options.signal,
    });
    if (!Array.isArray(body?.attempts))
      throw new KeelProtocolError(`GET ${run(id)}/attempts did not answer with { attempts }`);
    return body.attempts;
  }

  async createMany(
    requests: readonly CreateRunRequest[],
    options: CallOptions = {},
  ): Promise<BatchRunResult[]> {
    const body = await this.#http.json<{ results?: BatchRunResult[] }>('POST', '/v1/runs:batch', {
      body: { runs: requests },
      signal: options.signal,
    });
    if (!Array.isArray(body?.results) || body.results.length !== requests.length)
      throw new KeelProtocolError('POST /v1/runs:batch did not answer one result per run');
    return body.results;
  }

  follow(runIds: readonly string[], options: CallOptions = {}): AsyncIterable<TenantEvent> {
    return followRuns(this.#open, runIds, options);
  }

  waitMany(runIds: readonly string[], options: WaitOptions = {}): Promise<Run[]> {
    return waitForRuns(this.#open, (id, o) => this.get(id, o), runIds, options);
  }

  readonly #open: OpenTenantStream = (filter, signal) =>
    streamTenantEvents(this.#http, filter, { from: 'start', ...(signal ? { signal } : {}) });

  async tree(id: string, options: CallOptions & { limit?: number } = {}): Promise<RunTree> {
    const path = `${run(id)}/tree${options.limit === undefined ? '' : `?limit=${options.limit}`}`;
    const body = await this.#http.json<Partial<RunTree>>('GET', path, { signal: options.signal });
    if (!Array.isArray(body?.runs))
      throw new KeelProtocolError(`GET ${run(id)}/tree did not answer with { runs }`);
    return body as RunTree;
  }
}
