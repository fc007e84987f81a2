// `npx node bench/isolation.ts [--quick] [--write]`: what running agent code in isolates (worker
// threads) costs per agent turn, against running it on the main thread. The same embedded Keel
// (SQLite, fsync) runs five-step runs one at a time, once per host. Per turn: the orchestrator's
// dispatch latency — from an effect's commit being acknowledged to the run's next effect being
// dispatched — which is the agent's turn plus, isolated, the reply to the isolate and the call
// back. Also the whole lone run, and what an isolate costs to start (time, RSS, heap) over an
// agents module importing only `keel` (bench/isolate-start.ts). `--write` records the section in
// bench/RESULTS.md.
import { createHistogram } from 'node:perf_hooks';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inThreadHost, type AgentHost } from '../src/engine/agent-host.ts';
import { IsolateHost } from '../src/engine/isolation/isolate-host.ts';
import { measureIsolateStart, type IsolateStartSummary } from './isolate-start.ts';
import {
  fiveSteps,
  machineInfo,
  progress,
  recordMs,
  spliceSection,
  startKeel,
  summarize,
  type LatencySummary,
} from './support.ts';

const AGENTS_FILE = fileURLToPath(new URL('./support.ts', import.meta.url));
const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const SECTION_START = '<!-- isolation section: written by bench/isolation.ts -->';
const SECTION_END = '<!-- end of isolation section -->';

interface HostResult {
  perTurn: LatencySummary;
  loneRun: LatencySummary;
}

async function measure(host: AgentHost, runs: number, warmup: number): Promise<HostResult> {
  const keel = await startKeel({ agents: [fiveSteps], agentHost: host });
  try {
    const one = async () => {
      const run = keel.newRun(fiveSteps);
      const ended = keel.ended(run.id);
      const started = performance.now();
      await keel.store.createRun(run);
      await ended;
      return performance.now() - started;
    };
    for (let i = 0; i < warmup; i++) await one();
    keel.orchestrator.dispatchLatency.reset();
    const lone = createHistogram();
    for (let i = 0; i < runs; i++) recordMs(lone, await one());
    return { perTurn: summarize(keel.orchestrator.dispatchLatency), loneRun: summarize(lone) };
  } finally {
    await keel.close();
    await host.close();
  }
}

const quick = process.argv.includes('--quick');
const runs = quick ? 100 : 500;
const warmup = quick ? 20 : 50;
const thread = await measure(inThreadHost, runs, warmup);
progress(
  `agent code on the main thread: per turn p50 ${thread.perTurn.p50Ms} ms, lone run p50 ${thread.loneRun.p50Ms} ms`,
);
const isolate = await measure(
  new IsolateHost({ agentsFile: AGENTS_FILE, models: [] }),
  runs,
  warmup,
);
progress(
  `agent code in an isolate: per turn p50 ${isolate.perTurn.p50Ms} ms, lone run p50 ${isolate.loneRun.p50Ms} ms`,
);

const starts: Array<[string, IsolateStartSummary]> = [
  ['src/index.ts', measureIsolateStart('src', quick ? 3 : 7)],
];
if (existsSync(fileURLToPath(new URL('../dist/index.js', import.meta.url))))
  starts.push(['dist/index.js', measureIsolateStart('dist', quick ? 3 : 7)]);
for (const [entry, r] of starts)
  progress(
    `isolate start over ${entry}: ${r.startMs} ms, RSS +${r.rssMiB} MiB, heap +${r.heapMiB} MiB`,
  );

const overhead = Math.round((isolate.perTurn.p50Ms - thread.perTurn.p50Ms) * 1000) / 1000;
const m = machineInfo();
const row = (name: string, r: HostResult) =>
  `| ${name} | ${r.perTurn.p50Ms} | ${r.perTurn.p99Ms} | ${r.loneRun.p50Ms} | ${r.loneRun.p99Ms} |`;
const body = `## Agent isolation: cost per agent turn

Recorded ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${m.nproc}× ${m.cpuModel}, Node ${m.node}. \`npx node bench/isolation.ts --write\`
(${runs} lone five-step runs per host after ${warmup} warm-up runs; SQLite with fsync).

| agent code runs | per turn p50 (ms) | per turn p99 (ms) | lone run p50 (ms) | lone run p99 (ms) |
|---|---|---|---|---|
${row('on the main thread (KEEL_AGENT_ISOLATION=thread)', thread)}
${row('in an isolate (default)', isolate)}

Overhead per agent turn, p50: **${overhead} ms** (target ≤ 0.2 ms: ${overhead <= 0.2 ? 'met' : 'not met'}). A turn is measured from an
effect's commit being acknowledged to the run's next effect being dispatched; isolated, it includes the reply
posted to the isolate and the call posted back. A whole step costs more: its body runs in the isolate, so a step
is four thread hops (call, attempt, its result, reply), which is what the lone run's p50 shows.

Starting an isolate, over an agents module that imports only \`keel\` (\`npx node bench/isolate-start.ts\`; medians of
${starts[0]![1].samples} fresh processes): from creating the host to the isolate having loaded the module, the process's RSS
growth; and, in a bare worker, the module's import time and the heap it holds (against a worker that imports nothing, after
a full GC).

| agents module imports | isolate start p50 / min (ms) | module import p50 / min (ms) | RSS growth (MiB) | isolate heap (MiB) | loads node:sqlite / pg / fastify |
|---|---|---|---|---|---|
${starts.map(([entry, r]) => `| ${entry} | ${r.startMs} / ${r.startMinMs} | ${r.importMs} / ${r.importMinMs} | ${r.rssMiB} | ${r.heapMiB} | ${r.loaded.length === 0 ? 'none' : r.loaded.join(', ')} |`).join('\n')}
`;
process.stdout.write(`\n${body}\n`);
if (process.argv.includes('--write'))
  writeFileSync(
    RESULTS,
    spliceSection(readFileSync(RESULTS, 'utf8'), SECTION_START, SECTION_END, body),
  );
