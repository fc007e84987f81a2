// keel/embedded: the Keel runtime inside the caller's process. startKeel() starts the same runtime as
// `keel dev`/`keel worker` (src/cli/runtime.ts, role `embedded`) on agents and tools given as
// values, on a SQLite file (one process) or Postgres (many processes, which claim, lease and recover
// each other's runs like `keel worker`s), and hands back runs with keel/client's interface.
//
// Isolation rule: agents given as values run in the process's own thread (agentIsolation
// `thread`, the default here); to run agent code in isolates, give the module that exports the
// agents (`agentsModule`): isolates load code from a module, never from values. Asking for
// `agentIsolation: 'isolate'` with values only is a KeelError `config_invalid`.
import { resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import { EventHub } from '../api/event-hub.ts';
import { type Role, startRuntimeWith } from '../cli/runtime.ts';
import { loadAgentsForStart } from '../cli/startup-checks.ts';
import type { KeelRuns } from '../client/keel-runs.ts';
import { ConfigSchema, type KeelConfig } from '../config/config.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { AgentDefinition, AnyToolDefinition, ModelDefinition } from '../sdk/types.ts';
import type { z } from 'zod';
import { EmbeddedRuns } from './embedded-runs.ts';

export { KeelError, isKeelError } from '../domain/keel-error.ts';
export type { ErrorCode } from '../domain/error-codes.ts';
export * from '../client/errors.ts';
export type * from '../client/keel-runs.ts';
export type * from '../client/types.ts';

/** Keel's configuration, as keys of the config schema (the KEEL_* variables, in camelCase). */
export type EmbeddedConfig = Partial<z.input<typeof ConfigSchema>>;

export interface StartKeelOptions {
  /** The agents this process serves (name and version each). */
  agents?: AgentDefinition[];
  tools?: ReadonlyArray<AnyToolDefinition>;
  models?: ModelDefinition[];
  /**
   * Instead of (or besides) values: a module exporting agents, tools and models, loaded as
   * `keel dev --agents` loads it. Only agents from a module can run in isolates.
   */
  agentsModule?: string;
  /** Where the SQLite store lives (default `.keel`); ignored when `databaseUrl` is set. */
  dataDir?: string;
  /** A PostgreSQL connection string: processes on one database share the work. */
  databaseUrl?: string;
  /** Serve the HTTP API and the dashboard (off unless asked). Port 0: any free port. */
  http?: { port: number; host?: string };
  /** Anything else of Keel's configuration (lease TTL, concurrency, durability, ...). */
  config?: EmbeddedConfig;
  /** Where Keel logs (default: warnings and errors to stderr). */
  logger?: Logger;
}

/** A running embedded Keel: `await using keel = await startKeel(...)` closes it at scope end. */
export interface EmbeddedKeel extends AsyncDisposable {
  /** The runs of this Keel, with keel/client's interface. */
  readonly runs: KeelRuns;
  /** The HTTP API's address, when `http` was asked for. */
  readonly url: string | undefined;
  /** The key of the embedded tenant for the HTTP API (config.apiKey, else generated). */
  readonly apiKey: string;
  /** This process's lease owner id (the `worker` of its runs' attempts). */
  readonly workerId: string;
  /**
   * Stops claiming, hands running runs back (their leases released, for this process or another
   * to resume), ends pending waits and event iterators, and closes the store. Idempotent.
   */
  close(): Promise<void>;
}

/** The configuration an embedded runtime starts with: the schema's defaults, then the options. */
export function embeddedConfig(options: StartKeelOptions): KeelConfig {
  const given = options.config ?? {};
  return ConfigSchema.parse({
    // Values cannot be loaded into isolates: they run in this thread unless a module is given.
    ...(options.agentsModule === undefined ? { agentIsolation: 'thread' } : {}),
    ...given,
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.databaseUrl === undefined ? {} : { databaseUrl: options.databaseUrl }),
    ...(options.http === undefined
      ? {}
      : { port: options.http.port, ...(options.http.host ? { host: options.http.host } : {}) }),
  });
}

/**
 * Starts Keel in this process.
 *
 * @example
 * await using keel = await startKeel({ agents: [support], dataDir: '.keel' });
 * const run = await keel.runs.create({ agent: 'support', input, idempotencyKey: ticket.id });
 * const done = await keel.runs.wait(run.id);
 */
export async function startKeel(options: StartKeelOptions): Promise<EmbeddedKeel> {
  let config: KeelConfig;
  try {
    config = embeddedConfig(options);
  } catch (error) {
    throw new KeelError('config_invalid', `invalid Keel configuration: ${String(error)}`, {
      cause: error,
    });
  }
  const fromModule =
    options.agentsModule === undefined
      ? { agents: [], tools: [], models: [] }
      : await loadAgentsForStart(resolve(options.agentsModule));
  const agents = [...fromModule.agents, ...(options.agents ?? [])];
  if (agents.length === 0)
    throw new KeelError('config_invalid', 'startKeel needs agents (agents or agentsModule)');
  const log = options.logger ?? pino({ level: 'warn' });
  const role: Role = 'embedded';
  const runtime = await startRuntimeWith(
    role,
    {
      agents,
      tools: [...fromModule.tools, ...(options.tools ?? [])],
      models: [...fromModule.models, ...(options.models ?? [])],
      agentsFile: options.agentsModule === undefined ? undefined : resolve(options.agentsModule),
    },
    config,
    log,
    { serveApi: options.http !== undefined },
  );
  const closing = new AbortController();
  const hub = new EventHub(runtime.store);
  const runs = new EmbeddedRuns({
    store: runtime.store,
    registry: runtime.registry,
    tenant: runtime.tenant!,
    hub,
    live: runtime.live,
    closing: closing.signal,
    stepPreviewMaxBytes: config.stepPreviewMaxBytes,
    batchRunsMax: config.batchRunsMax,
  });
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing.abort();
      hub.close();
      await runtime.stop();
    })();
    return closed;
  };
  return {
    runs,
    url: runtime.address,
    apiKey: runtime.devApiKey!,
    workerId: runtime.orchestrator.owner,
    close,
    [Symbol.asyncDispose]: close,
  };
}
