// `npx node bench/snapshot-block.ts [--files N] [--tree DIR]`: how long a workspace snapshot of N
// empty files blocks the main thread (the longest gap between 1 ms ticks of a timer, and the main
// thread's active time from eventLoopUtilization), and the snapshot's wall time, for a first
// snapshot and a repeat of the unchanged workspace. `--tree` points at another checkout of Keel
// (e.g. the commit before the snapshot worker) to measure its manifest.ts the same way.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '80000' },
    tree: { type: 'string', default: resolve(import.meta.dirname, '..') },
  },
});
const files = Number(values.files);
const tree = resolve(values.tree!);
const { snapshotWorkspace } = await import(
  pathToFileURL(join(tree, 'src/sandbox/manifest.ts')).href
);
const { FileArtifactStore } = await import(
  pathToFileURL(join(tree, 'src/sandbox/file-artifact-store.ts')).href
);

const base = mkdtempSync(join(tmpdir(), 'keel-bench-snap-'));
const workspace = join(base, 'ws');
mkdirSync(join(workspace, 'many'), { recursive: true });
for (let i = 0; i < files; i++) writeFileSync(join(workspace, 'many', `f${i}`), '');
const store = new FileArtifactStore(join(base, 'artifacts'));
const limits = { fileBytes: 1 << 20, workspaceBytes: 1 << 30, maxFiles: files + 10 };

async function measure(label: string): Promise<void> {
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  last = started;
  longest = 0;
  await snapshotWorkspace(workspace, store, limits);
  const wallMs = performance.now() - started;
  const active = performance.eventLoopUtilization(elu).active;
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(tick);
  console.log(
    `${label}: snapshot ${wallMs.toFixed(0)} ms wall, main thread active ${active.toFixed(0)} ms, longest main-thread block ${longest.toFixed(0)} ms`,
  );
}

console.log(`${files} empty files, tree ${tree}`);
await measure('first snapshot');
await measure('unchanged repeat');
rmSync(base, { recursive: true, force: true });
process.exit(0);
