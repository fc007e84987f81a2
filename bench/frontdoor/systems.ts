// The processes the front-door bench measures, each started fresh and stopped by it: `keel dev` (the
// real CLI, src/cli/main.ts) on SQLite in a temp data dir or on a fresh Postgres database; the
// Restate server (the linux-x64 binary of @restatedev/restate-server, its own temp base dir and free
// ports) with the Node endpoint of bench/frontdoor/restate-endpoint.ts registered to it; and the
// client process (bench/frontdoor/client.ts). Each is killed by its own pid at the end.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, removeDir } from '../support.ts';
import type { ClientConfig } from './client.ts';
import type { LoopResult } from './loop.ts';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('./workload.ts', import.meta.url));
const CLIENT = fileURLToPath(new URL('./client.ts', import.meta.url));
const RESTATE_ENDPOINT = fileURLToPath(new URL('./restate-endpoint.ts', import.meta.url));
/** Generous: on a loaded machine `keel dev` has taken over a minute to start. */
const START_TIMEOUT_MS = 180_000;
/** The key of the dev tenant of every `keel dev` the bench starts (KEEL_API_KEY). */
export const BENCH_API_KEY = 'keel-frontdoor-bench-key';

export interface Started {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound then released: good enough for a bench on one machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects if it exits first. */
function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () =>
        reject(new Error(`${what} did not start in ${START_TIMEOUT_MS} ms: ${seen.slice(-2000)}`)),
      START_TIMEOUT_MS,
    );
    const onData = (data: Buffer): void => {
      seen = (seen + data.toString()).slice(-8192);
      const match = pattern.exec(seen);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      // Keep draining, so a chatty child never blocks on a full pipe.
      child.stdout!.resume();
      resolve(match);
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${signal ?? code}: ${seen.slice(-2000)}`));
    });
  });
}

function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface KeelOptions {
  isolation: 'isolate' | 'thread';
  /** Set: Keel on this Postgres database; unset: SQLite in a temp data dir. */
  databaseUrl?: string;
}

/** `keel dev` on a free port, with the bench's agents and a known API key. */
export async function startKeelDev(options: KeelOptions): Promise<Started & { dataDir: string }> {
  const dataDir = makeTempDir();
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KEEL_API_KEY: BENCH_API_KEY,
    KEEL_AGENT_ISOLATION: options.isolation,
    KEEL_LOG_LEVEL: 'warn',
  };
  delete env.KEEL_DATABASE_URL;
  if (options.databaseUrl !== undefined) env.KEEL_DATABASE_URL = options.databaseUrl;
  const child = spawn(
    process.execPath,
    [MAIN, 'dev', '--agents', AGENTS, '--port', String(port), '--data', dataDir],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const match = await waitForLine(child, /keel dev: (http:\/\/\S+)/, 'keel dev');
    return {
      pid: child.pid!,
      url: match[1]!,
      dataDir,
      async stop() {
        await stopChild(child);
        removeDir(dataDir);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    removeDir(dataDir);
    throw error;
  }
}

export interface RestateStarted extends Started {
  /** The Node endpoint's process (the SDK side of each step). */
  endpointPid: number;
}

/** The Restate server (its own temp base dir), the Node endpoint, and the endpoint registered. */
export async function startRestate(): Promise<RestateStarted> {
  const dir = makeTempDir();
  const [ingress, admin, node, endpointPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const binary = fileURLToPath(
    import.meta.resolve('@restatedev/restate-server-linux-x64/bin/restate-server'),
  );
  const server = spawn(
    binary,
    ['--no-logo', '--base-dir', join(dir, 'data'), '--node-name', 'bench', '--listen-mode', 'tcp'],
    {
      cwd: dir,
      env: {
        ...process.env,
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
        RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
        RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}/`,
        RESTATE_LOG_FILTER: 'warn',
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    },
  );
  const endpoint = spawn(process.execPath, [RESTATE_ENDPOINT, String(endpointPort)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = async (): Promise<void> => {
    await Promise.all([stopChild(endpoint), stopChild(server)]);
    removeDir(dir);
  };
  try {
    await waitForLine(endpoint, /restate endpoint listening/, 'the Restate endpoint');
    await untilOk(`http://127.0.0.1:${admin}/health`, 'the Restate admin API');
    const registered = await fetch(`http://127.0.0.1:${admin}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri: `http://127.0.0.1:${endpointPort}` }),
    });
    if (!registered.ok)
      throw new Error(
        `registering the endpoint answered ${registered.status}: ${await registered.text()}`,
      );
    await untilOk(`http://127.0.0.1:${ingress}/restate/health`, 'the Restate ingress');
    return {
      pid: server.pid!,
      endpointPid: endpoint.pid!,
      url: `http://127.0.0.1:${ingress}`,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function untilOk(url: string, what: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not answer at ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Runs bench/frontdoor/client.ts in its own process and returns what it measured. */
export function runClientProcess(config: ClientConfig): Promise<LoopResult> {
  return runJsonChild(CLIENT, [JSON.stringify(config)], 'the bench client');
}

/** Runs a Node script that prints its result as the last JSON line of its stdout. */
export async function runJsonChild<T>(script: string, args: string[], what: string): Promise<T> {
  const out = await runChild(script, args, what);
  const last = out.trim().split('\n').at(-1) ?? '';
  if (!last.startsWith('{')) throw new Error(`${what} printed no result: ${out.slice(-2000)}`);
  return JSON.parse(last) as T;
}

/** Runs a Node script to its end and returns its stdout (stderr goes to the bench's). */
export function runChild(script: string, args: string[], what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (data: Buffer) => {
      out += data.toString();
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${what} exited with ${signal ?? code}: ${out.slice(-2000)}`));
    });
  });
}
