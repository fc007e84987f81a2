// `npx node bench/isolate-start.ts [--entry src|dist] [--samples N]`: what an agent isolate costs
// to start, by the package entry its agents module imports (`import { defineAgent } from 'keel'`).
// Each sample is a fresh process (run with --expose-gc) that starts a real IsolateHost with one
// isolate over a one-agent module and measures the time until the isolate loaded it and the
// process's RSS growth; then a bare worker thread imports the same module and reports its heap
// after a full GC, against a worker that imports nothing. Medians over the samples.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { IsolateHost } from '../src/engine/isolation/isolate-host.ts';

const ENTRIES = {
  src: fileURLToPath(new URL('../src/index.ts', import.meta.url)),
  dist: fileURLToPath(new URL('../dist/index.js', import.meta.url)),
} as const;
type Entry = keyof typeof ENTRIES;
const SAMPLES_DEFAULT = 7;
const MIB = 1024 * 1024;

export interface IsolateStartSample {
  /** From creating the IsolateHost to its isolate having loaded the agents module. */
  startMs: number;
  /** The `import()` of the agents module alone, timed inside a bare worker. */
  importMs: number;
  /**
   * Process RSS after the isolate is ready minus before it was created (after a full GC each time).
   */
  rssMiB: number;
  /**
   * Heap used by a worker that imported the agents module, minus one that imported nothing (after a
   * full GC).
   */
  heapMiB: number;
  /** node:sqlite, pg, fastify: whether the agents module's import graph loaded each. */
  loaded: string[];
}

/**
 * Medians, plus the fastest start and import: on a loaded machine the minimum is the steadier
 * figure.
 */
export type IsolateStartSummary = Omit<IsolateStartSample, 'loaded'> & {
  startMinMs: number;
  importMinMs: number;
  loaded: string[];
  samples: number;
};

function agentsFileFor(entry: Entry, dir: string): string {
  const file = join(dir, 'agents.ts');
  writeFileSync(
    file,
    `import { defineAgent } from ${JSON.stringify(pathToFileURL(ENTRIES[entry]).href)};\n` +
      `export const hello = defineAgent({ name: 'hello', version: '1', run: async (ctx) => ctx.step('hi', () => 'hi') });\n`,
  );
  return file;
}

const WORKER_HEAP = `
import { parentPort, workerData } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { registerHooks } from 'node:module';
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
const started = performance.now();
if (workerData.file !== undefined) await import(workerData.file);
const importMs = performance.now() - started;
for (let i = 0; i < 3; i++) globalThis.gc();
const heavy = [...seen].filter((url) => /^node:sqlite$|\\/node_modules\\/(pg|fastify)\\//.test(url)).map((url) => url.startsWith('node:') ? url : url.split('/node_modules/')[1].split('/')[0]);
parentPort.postMessage({ heap: getHeapStatistics().used_heap_size, importMs, loaded: [...new Set(heavy)] });
`;

function workerHeap(
  file: string | undefined,
): Promise<{ heap: number; importMs: number; loaded: string[] }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER_HEAP)}`), {
      workerData: { file: file === undefined ? undefined : pathToFileURL(file).href },
    });
    worker.once('message', (message) => {
      resolve(message);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

const gc = (): void => {
  for (let i = 0; i < 3; i++) (globalThis as { gc?: () => void }).gc?.();
};

/** One sample, in this process (which must run with --expose-gc and nothing else started). */
async function sampleHere(entry: Entry): Promise<IsolateStartSample> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-isolate-start-'));
  try {
    const agentsFile = agentsFileFor(entry, dir);
    gc();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const host = new IsolateHost({ agentsFile, models: [], isolates: 1 });
    await host.ready();
    const startMs = performance.now() - started;
    gc();
    const rssMiB = (process.memoryUsage().rss - rssBefore) / MIB;
    await host.close();
    const bare = await workerHeap(undefined);
    const loaded = await workerHeap(agentsFile);
    return {
      startMs,
      importMs: loaded.importMs,
      rssMiB,
      heapMiB: (loaded.heap - bare.heap) / MIB,
      loaded: loaded.loaded,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (value: number): number => Math.round(value * 100) / 100;
const median = (values: number[]): number =>
  round([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0);

/** Medians over `samples` fresh processes. */
export function measureIsolateStart(entry: Entry, samples = SAMPLES_DEFAULT): IsolateStartSummary {
  const runs: IsolateStartSample[] = [];
  for (let i = 0; i < samples; i++) {
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', fileURLToPath(import.meta.url), '--sample', entry],
      { encoding: 'utf8' },
    );
    runs.push(JSON.parse(out.trim().split('\n').at(-1)!) as IsolateStartSample);
  }
  return {
    startMs: median(runs.map((r) => r.startMs)),
    startMinMs: round(Math.min(...runs.map((r) => r.startMs))),
    importMs: median(runs.map((r) => r.importMs)),
    importMinMs: round(Math.min(...runs.map((r) => r.importMs))),
    rssMiB: median(runs.map((r) => r.rssMiB)),
    heapMiB: median(runs.map((r) => r.heapMiB)),
    loaded: [...new Set(runs.flatMap((r) => r.loaded))],
    samples,
  };
}

if (import.meta.main) {
  const arg = (name: string) => {
    const at = process.argv.indexOf(name);
    return at === -1 ? undefined : process.argv[at + 1];
  };
  const sample = arg('--sample');
  if (sample !== undefined) {
    process.stdout.write(`${JSON.stringify(await sampleHere(sample as Entry))}\n`);
    process.exit(0);
  }
  const entries = (arg('--entry') === undefined ? ['src', 'dist'] : [arg('--entry')]) as Entry[];
  const samples = Number(arg('--samples') ?? SAMPLES_DEFAULT);
  for (const entry of entries) {
    const r = measureIsolateStart(entry, samples);
    process.stdout.write(
      `${entry} (${ENTRIES[entry]}): isolate start p50 ${r.startMs} ms (min ${r.startMinMs}), ` +
        `module import p50 ${r.importMs} ms (min ${r.importMinMs}), RSS +${r.rssMiB} MiB, isolate heap +${r.heapMiB} MiB, ` +
        `loaded ${r.loaded.length === 0 ? 'none of node:sqlite, pg, fastify' : r.loaded.join(', ')} (${samples} samples)\n`,
    );
  }
}
