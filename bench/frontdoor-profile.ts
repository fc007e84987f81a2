// A focused profiler of the front door: starts the real server (`keel dev`, SQLite, agent code in
// isolates) as a child process, drives closed-loop lanes from this process (POST /v1/runs, then the
// run's SSE stream read to its end), and reports the server process's CPU per durable step from
// /proc/<pid>/stat (user + system of every thread: the figure a noisy shared machine disturbs
// least), then the wall time of lone runs one after another. With --profile the server runs under
// --cpu-prof and the main thread's samples inside the measured window are summed by area
// (cpuprofile-areas.ts). The side-by-side comparison lives in bench/frontdoor.ts; this is for
// finding where the microseconds go.
//
//   npx node bench/frontdoor-profile.ts [--runs 2000] [--lanes 50] [--lone 200] [--profile]
//     [--isolation isolate|thread] [--keep]
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createHistogram } from 'node:perf_hooks';
import { summarizeProfile } from './cpuprofile-areas.ts';
import { machineInfo, makeTempDir, progress, recordMs, removeDir, summarize } from './support.ts';

const STEPS_PER_RUN = 5;
const AGENT = 'profile-five-steps';
const API_KEY = 'bench-frontdoor-profile-key';
const WARMUP_RUNS = 300;
/** Generous: a start on a loaded shared machine can take tens of seconds. */
const START_TIMEOUT_MS = 120_000;
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('./frontdoor-profile-agents.ts', import.meta.url));

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    lanes: { type: 'string', default: '50' },
    lone: { type: 'string', default: '200' },
    isolation: { type: 'string', default: 'isolate' },
    profile: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});

interface Server {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
}

async function startServer(dir: string, profileDir: string | undefined): Promise<Server> {
  const args = [
    ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]),
    MAIN,
    'dev',
    '--agents',
    AGENTS,
    '--port',
    '0',
    '--data',
    join(dir, 'data'),
  ];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      KEEL_API_KEY: API_KEY,
      KEEL_AGENT_ISOLATION: flags.isolation,
      KEEL_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no banner after ${START_TIMEOUT_MS} ms: ${out}`));
    }, START_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /keel dev: (http:\/\/\S+)/.exec(out);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`server exited (${code}) before it listened: ${out}`)),
    );
  });
  return { child, url, exited };
}

/** user + system CPU of the whole process (every thread), in milliseconds. */
function processCpuMs(pid: number, ticksPerSecond: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** One run through the front door: POST, then its event stream read until the server closes it. */
async function oneRun(url: string): Promise<void> {
  const headers = { authorization: `Bearer ${API_KEY}` };
  const res = await fetch(`${url}/v1/runs`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: AGENT }),
  });
  const run = (await res.json()) as { id?: string };
  if (res.status !== 201 || run.id === undefined)
    throw new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(run)}`);
  const stream = await fetch(`${url}/v1/runs/${run.id}/events`, { headers });
  const text = await stream.text();
  if (!text.includes('event: run.succeeded'))
    throw new Error(`run ${run.id} did not succeed: ${text.slice(-500)}`);
}

async function closedLoop(url: string, runs: number, lanes: number): Promise<void> {
  let left = runs;
  const lane = async () => {
    while (left > 0) {
      left--;
      await oneRun(url);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

async function main(): Promise<void> {
  const runs = Number(flags.runs);
  const lanes = Number(flags.lanes);
  const lone = Number(flags.lone);
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  const dir = makeTempDir();
  const profileDir = flags.profile ? join(dir, 'profile') : undefined;
  const server = await startServer(dir, profileDir);
  const pid = server.child.pid!;
  try {
    progress(
      `server ${server.url} (pid ${pid}, isolation ${flags.isolation}); warming up with ${WARMUP_RUNS} runs`,
    );
    await closedLoop(server.url, WARMUP_RUNS, lanes);

    const cpuBefore = processCpuMs(pid, ticks);
    const windowStartUs = Number(process.hrtime.bigint() / 1000n);
    const started = performance.now();
    await closedLoop(server.url, runs, lanes);
    const wallMs = performance.now() - started;
    const windowEndUs = Number(process.hrtime.bigint() / 1000n);
    const cpuMs = processCpuMs(pid, ticks) - cpuBefore;
    const steps = runs * STEPS_PER_RUN;

    const latency = createHistogram();
    for (let i = 0; i < lone; i++) {
      const at = performance.now();
      await oneRun(server.url);
      recordMs(latency, performance.now() - at);
    }
    const result = {
      isolation: flags.isolation,
      profiled: flags.profile,
      lanes,
      runs,
      steps,
      stepsPerSec: Math.round(steps / (wallMs / 1000)),
      serverCpuMsPerStep: Math.round((cpuMs / steps) * 1000) / 1000,
      serverCpuPct: Math.round((cpuMs / wallMs) * 100),
      loneRun: summarize(latency),
      machine: machineInfo(),
    };
    console.log(JSON.stringify(result, null, 2));
    server.child.kill('SIGINT');
    await server.exited;
    if (profileDir !== undefined) {
      for (const file of readdirSync(profileDir).sort()) {
        const summary = summarizeProfile(
          JSON.parse(readFileSync(join(profileDir, file), 'utf8')),
          { fromUs: windowStartUs, toUs: windowEndUs },
          steps,
        );
        console.log(`\n== ${file}\n${summary}`);
      }
      if (flags.keep) console.log(`\nprofiles kept in ${profileDir}`);
    }
  } finally {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    if (!flags.keep) removeDir(dir);
  }
}

await main();
