// How the CLI reaches Keel: keel/client (src/client/), the same client applications and the
// dashboard use, plus `request()` for the routes it has no typed operation for (keys, tenants,
// agents, the live planner, version migration). The CLI's error printer keys off the client's typed
// errors under their CLI names. It never reads the environment, prints, exits or retries.
import {
  HttpRuns,
  HttpSchedules,
  HttpTransport,
  type KeelRuns,
  type KeelSchedules,
} from '../../client/index.ts';
import type { RequestOptions } from '../../client/http-transport.ts';

export {
  isTransientError,
  KeelApiError as ApiError,
  KeelConnectionError as ConnectionError,
  KeelProtocolError as ProtocolError,
  KeelStreamError as StreamError,
  RUN_STATUSES,
  TERMINAL_EVENT_TYPES,
  TERMINAL_RUN_STATUSES,
} from '../../client/index.ts';
export type {
  Attempt,
  CreateRunRequest as SubmitRunBody,
  ForkRequest as CopyRunBody,
  ListRunsFilter as ListRunsQuery,
  Run,
  RunError as ApiErrorBody,
  RunEvent,
  RunPage,
  RunStatus,
  RunTree,
  Step,
  ToolOutput,
} from '../../client/index.ts';
export { REQUEST_TIMEOUT_MS } from '../../client/index.ts';

/**
 * Keel at `baseUrl` with an API key: `runs` and `schedules` are keel/client's typed operations.
 *
 * @example
 * const client = new KeelHttpClient({ baseUrl: 'http://127.0.0.1:7070', apiKey: 'k_…' });
 * const run = await client.runs.get('run_123'); // throws ApiError (code 'run_not_found') on 404
 */
export class KeelHttpClient {
  readonly baseUrl: string;
  readonly runs: KeelRuns;
  readonly schedules: KeelSchedules;
  readonly #http: HttpTransport;

  constructor(options: { baseUrl: string; apiKey: string }) {
    this.#http = new HttpTransport(options);
    this.baseUrl = this.#http.baseUrl;
    this.runs = new HttpRuns(this.#http);
    this.schedules = new HttpSchedules(this.#http);
  }

  /** A JSON request to a route without a typed operation; an empty 2xx body is `undefined`. */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.#http.json<T>(method, path, options);
  }
}
