// The distributed target of a simulation: `keel server` and N `keel worker` processes started here
// against one PostgreSQL database, each loading the simulator's agents module, with a metrics
// listener of its own so the sampler can read every process. Owns the child processes: starts
// them, waits until each answers, and stops them (SIGTERM, then SIGKILL after a grace).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { KeelError } from '../domain/keel-error.ts';
import { SIM_SCENARIO_ENV, SIM_START_AT_ENV } from './sim-agents.ts';

/** How long a process may take to answer; a 2-core machine under a suite takes tens of seconds. */
const START_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 20_000;
/** The started line `keel server` prints once its API listens. */
const SERVER_STARTED = /keel server: (http:\/\/\S+)/;

// This module runs from src/ (TypeScript, development) or dist/ (the published JavaScript): the
// CLI and the agents module are its siblings with the same extension.
const EXT = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
const CLI = fileURLToPath(new URL(`../cli/main.${EXT}`, import.meta.url));
export const SIM_AGENTS_MODULE = fileURLToPath(new URL(`./agents-module.${EXT}`, import.meta.url));

export interface SimProcess {
  name: string;
  pid: number;
  /** Where its /metrics answers (the server's API port with the admin key; a worker's metrics port). */
  metricsUrl: string;
}

export interface SimCluster {
  url: string;
  processes: SimProcess[];
  stop(): Promise<void>;
}

export interface SimClusterOptions {
  databaseUrl: string;
  workers: number;
  scenarioFile: string;
  startAtMs: number;
  adminKey: string;
  poolsFile: string;
  dataDir: string;
}

export async function startSimCluster(options: SimClusterOptions): Promise<SimCluster> {
  const children: Array<{ name: string; child: ChildProcess; output: () => string }> = [];
  // The processes must not outlive the simulator: on its exit (also process.exit from a signal
  // handler) whatever is still running is killed.
  const killAll = () => {
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const stop = async () => {
    await Promise.all(children.map(({ child }) => stopChild(child)));
    process.off('exit', killAll);
  };
  try {
    const serverMetrics = await freePort();
    const server = spawnRole('server', options, ['--port', '0'], serverMetrics);
    children.push({ name: 'server', ...server });
    const url = await waitFor(
      'keel server',
      server,
      () => SERVER_STARTED.exec(server.output())?.[1],
    );
    const processes: SimProcess[] = [
      {
        name: 'server',
        pid: server.child.pid!,
        metricsUrl: `http://127.0.0.1:${serverMetrics}/metrics`,
      },
    ];
    // Workers start after the server has migrated the database (they would wait on its lock).
    for (let i = 1; i <= options.workers; i++) {
      const port = await freePort();
      const worker = spawnRole('worker', options, [], port);
      children.push({ name: `worker-${i}`, ...worker });
      const metricsUrl = `http://127.0.0.1:${port}/metrics`;
      await waitFor(`keel worker ${i}`, worker, async () =>
        (await fetch(metricsUrl.replace('/metrics', '/readyz')).catch(() => undefined))?.ok
          ? metricsUrl
          : undefined,
      );
      processes.push({ name: `worker-${i}`, pid: worker.child.pid!, metricsUrl });
    }
    return { url, processes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function spawnRole(
  role: 'server' | 'worker',
  options: SimClusterOptions,
  args: string[],
  metricsPort: number,
): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    [
      CLI,
      role,
      '--agents',
      SIM_AGENTS_MODULE,
      '--data',
      `${options.dataDir}/${role}-${metricsPort}`,
      ...args,
    ],
    {
      env: {
        ...process.env,
        KEEL_DATABASE_URL: options.databaseUrl,
        KEEL_ADMIN_KEY: options.adminKey,
        KEEL_POOLS_FILE: options.poolsFile,
        KEEL_METRICS_PORT: String(metricsPort),
        KEEL_METRICS_HOST: '127.0.0.1',
        KEEL_LOG_LEVEL: 'warn',
        [SIM_SCENARIO_ENV]: options.scenarioFile,
        [SIM_START_AT_ENV]: String(options.startAtMs),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // Kept short: a process that logs a lot must not grow this one's memory without bound.
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-16_384);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => out };
}

async function waitFor<T>(
  name: string,
  spawned: { child: ChildProcess; output: () => string },
  ready: () => T | undefined | Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const { exitCode, signalCode } = spawned.child;
    if (exitCode !== null || signalCode !== null)
      throw new KeelError(
        'config_invalid',
        `${name} exited with ${exitCode ?? signalCode}: ${spawned.output()}`,
      );
    const value = await ready();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new KeelError(
        'config_invalid',
        `${name} did not start within ${START_TIMEOUT_MS} ms: ${spawned.output()}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** A port free now (bound and released): the child binds it a moment later. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
