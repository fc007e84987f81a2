// Test harness for real processes: starts `keel dev` (on a free port and data dir) or `keel server`
// / `keel worker` (against a Postgres database) from source as child processes, waits until they
// are up, and signals them for real (SIGKILL, SIGSTOP/SIGCONT). Every test kills what it started in
// t.after.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/**
 * A start is a few seconds; a loaded CI machine (the parallel suite and two tortures on 2 cores)
 * has taken over 20 s, and a test failing on that says nothing about the code.
 */
const STARTUP_TIMEOUT_MS = 60_000;
/**
 * `keel server|worker` prints this once it has migrated, started its orchestrator and (server) is
 * listening.
 */
const STARTED_LINE = /keel (server|worker): (\S+) .*\(worker (\S+), durability/;
/** `keel dev` prints its URL first, once it listens (at every log level). */
const DEV_STARTED_LINE = /keel dev: (http:\/\/\S+)/;

/**
 * Ports tests hand to the processes they start: below Linux's ephemeral range (32768 and up by
 * default).
 */
const TEST_PORT_MIN = 20_000;
const TEST_PORT_MAX = 32_000;
const FREE_PORT_ATTEMPTS = 50;

/**
 * A port that is free now, for a process a test starts (and may restart on the same port). It is
 * picked at random below the kernel's ephemeral range: a port the kernel gave out (`listen(0)`, or
 * the local end of any outgoing connection, which every Postgres client and fetch makes) could be
 * taken again by another test's socket between this check and the child's listen, and was (`port …
 * is already in use` in a parallel run).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < FREE_PORT_ATTEMPTS; attempt++) {
    const port = TEST_PORT_MIN + Math.floor(Math.random() * (TEST_PORT_MAX - TEST_PORT_MIN));
    if (await canListen(port)) return port;
  }
  throw new Error(
    `no free port between ${TEST_PORT_MIN} and ${TEST_PORT_MAX} after ${FREE_PORT_ATTEMPTS} attempts`,
  );
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface KeelProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Sends `signal` and resolves once the process has exited (at once if it had already). */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface KeelRoleProcess extends KeelProcess {
  role: 'server' | 'worker';
  /** The orchestrator's lease owner id (`lease_owner` in the runs table). */
  owner: string;
  pid: number;
  /** Sends a signal that does not end the process (SIGSTOP, SIGCONT). */
  signal(signal: NodeJS.Signals): void;
  alive(): boolean;
}

function spawnKeel(args: string[], env: Record<string, string>): ReturnType<typeof spawnNode> {
  return spawnNode(MAIN, args, env);
}

/**
 * Runs `script` (TypeScript, from source) in a child Node process: its output collected, `kill`
 * resolving once it has exited. For `keel` itself and for applications embedding Keel.
 */
export function spawnNode(
  script: string,
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; output: () => string; kill: KeelProcess['kill'] } {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, KEEL_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const kill = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  return { child, output: () => out, kill };
}

async function waitUntilUp(
  name: string,
  spawned: ReturnType<typeof spawnKeel>,
  up: () => Promise<boolean>,
  timeoutMs = STARTUP_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { exitCode, signalCode } = spawned.child;
    if (exitCode !== null || signalCode !== null)
      throw new Error(`${name} exited with ${exitCode ?? signalCode}: ${spawned.output()}`);
    if (await up().catch(() => false)) return;
    if (Date.now() > deadline) {
      await spawned.kill('SIGKILL');
      throw new Error(`${name} did not start within ${timeoutMs} ms: ${spawned.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startKeelProcess(options: {
  agents: string;
  dataDir: string;
  /**
   * Omitted: the process binds port 0 and its URL is read from its first line, so no other test can
   * take the port between a check and the listen. Given: for a restart on the port a test holds.
   */
  port?: number;
  apiKey: string;
  env?: Record<string, string>;
  /** More arguments for `keel dev` (e.g. `--watch`). */
  args?: string[];
  /**
   * How long the start may take; default STARTUP_TIMEOUT_MS. An agents module that loads large
   * SDKs (the adapter examples) takes longer on a busy machine.
   */
  startupTimeoutMs?: number;
}): Promise<KeelProcess> {
  const spawned = spawnKeel(
    [
      'dev',
      '--agents',
      options.agents,
      '--port',
      String(options.port ?? 0),
      '--data',
      options.dataDir,
      ...(options.args ?? []),
    ],
    { KEEL_API_KEY: options.apiKey, ...options.env },
  );
  let url = options.port === undefined ? undefined : `http://127.0.0.1:${options.port}`;
  await waitUntilUp(
    'keel dev',
    spawned,
    async () => {
      url ??= DEV_STARTED_LINE.exec(spawned.output())?.[1];
      return url !== undefined && (await fetch(`${url}/healthz`)).ok;
    },
    options.startupTimeoutMs,
  );
  return { child: spawned.child, url: url!, output: spawned.output, kill: spawned.kill };
}

/**
 * Starts `keel server` (API on a free port) or `keel worker` against `databaseUrl`. `name` becomes
 * the processes' Postgres application_name (PGAPPNAME), so a test can see in pg_stat_activity
 * whether a killed process's sessions are gone.
 */
export async function startKeelRole(options: {
  role: 'server' | 'worker';
  agents: string;
  databaseUrl: string;
  name: string;
  apiKey?: string;
  env?: Record<string, string>;
  /** How long to wait for the started line (default: waitUntilUp's). */
  startupTimeoutMs?: number;
}): Promise<KeelRoleProcess> {
  // A server binds port 0: its URL is read from the started line, so no port can be taken by
  // another test between a check and the listen.
  const args = [
    options.role,
    '--agents',
    options.agents,
    ...(options.role === 'server' ? ['--port', '0'] : []),
  ];
  const spawned = spawnKeel(args, {
    KEEL_DATABASE_URL: options.databaseUrl,
    PGAPPNAME: options.name,
    ...(options.apiKey !== undefined ? { KEEL_API_KEY: options.apiKey } : {}),
    ...options.env,
  });
  let started: RegExpMatchArray | null = null;
  await waitUntilUp(
    `keel ${options.role} (${options.name})`,
    spawned,
    async () => {
      started = STARTED_LINE.exec(spawned.output());
      return started !== null;
    },
    options.startupTimeoutMs,
  );
  const { child } = spawned;
  return {
    role: options.role,
    owner: started![3]!,
    pid: child.pid!,
    child,
    url: options.role === 'server' ? started![2]! : '',
    output: spawned.output,
    kill: spawned.kill,
    signal: (signal) => void child.kill(signal),
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}
