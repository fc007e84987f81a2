// Test harness for real processes: starts `keel dev` (from source) as a child process on a free port and data dir,
// waits for /healthz, and kills it with a real signal. Used by crash tests; every child is killed in close().
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface KeelProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export async function startKeelProcess(options: { agents: string; dataDir: string; port: number; apiKey: string; env?: Record<string, string> }): Promise<KeelProcess> {
  const child = spawn(process.execPath, [MAIN, 'dev', '--agents', options.agents, '--port', String(options.port), '--data', options.dataDir], {
    env: { ...process.env, KEEL_API_KEY: options.apiKey, KEEL_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`keel dev exited with ${child.exitCode}: ${out}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`keel dev did not answer /healthz within 20 s: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    url,
    output: () => out,
    kill: (signal) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}
