// The closed loop of the front-door bench and what it meters over its window. `lanes` loops each
// start one workflow and wait for it to end, then start the next; the first `warmupRuns` completions
// are not measured. The window opens when the warm-up is done and closes after `runs` more
// completions: over it, the machine's busy CPU (/proc/stat, every process on the machine), this
// process's own CPU (process.cpuUsage) and the CPU of named process trees (a server and its
// children, from /proc/<pid>/stat). It judges nothing; bench/frontdoor.ts turns it into figures.
import { readFileSync } from 'node:fs';
import { createHistogram } from 'node:perf_hooks';
import { clockTicksPerSec, clusterTicks } from '../postgres-support.ts';
import { recordMs, summarize, type LatencySummary } from '../support.ts';

export interface LoopOptions {
  /** Starts one workflow and resolves once it has ended (rejects if it did not succeed). */
  runOne: () => Promise<void>;
  lanes: number;
  warmupRuns: number;
  runs: number;
  /** Process trees metered over the window, by label (a server's pid, a postmaster's pid). */
  trees: Record<string, number>;
}

export interface LoopResult {
  runs: number;
  seconds: number;
  /** Busy CPU of the whole machine over the window (all cores, every process). */
  machineCpuMs: number;
  /** This process's own CPU over the window (the client, or the in-process system). */
  selfCpuMs: number;
  /** CPU of each metered process tree over the window; null when /proc did not show it. */
  treeCpuMs: Record<string, number | null>;
  /** From a workflow's start to its end, over the window. */
  latency: LatencySummary;
  failures: string[];
}

/** Busy ticks of the whole machine: every field of /proc/stat's `cpu` line but idle and iowait. */
function machineBusyTicks(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  void idle;
  void iowait;
  return user! + nice! + system! + irq! + softirq! + steal!;
}

interface Snapshot {
  at: number;
  machine: number;
  self: number;
  trees: Record<string, number | undefined>;
}

function snapshot(trees: Record<string, number>): Snapshot {
  const ticks: Record<string, number | undefined> = {};
  for (const [label, pid] of Object.entries(trees)) ticks[label] = clusterTicks(pid);
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    machine: machineBusyTicks(),
    self: (usage.user + usage.system) / 1000,
    trees: ticks,
  };
}

export async function closedLoop(options: LoopOptions): Promise<LoopResult> {
  const ticksToMs = 1000 / clockTicksPerSec();
  const total = options.warmupRuns + options.runs;
  const latency = createHistogram();
  const failures: string[] = [];
  let completed = 0;
  let start: Snapshot | undefined;
  let end: Snapshot | undefined;
  if (options.warmupRuns === 0) start = snapshot(options.trees);
  const lane = async (): Promise<void> => {
    // Lanes keep starting workflows until the window closes, so it closes with all lanes busy.
    while (end === undefined && failures.length === 0) {
      const began = performance.now();
      try {
        await options.runOne();
      } catch (error) {
        failures.push(String(error));
        return;
      }
      completed++;
      if (start !== undefined && end === undefined) recordMs(latency, performance.now() - began);
      if (completed === options.warmupRuns) start = snapshot(options.trees);
      if (completed === total) end = snapshot(options.trees);
    }
  };
  await Promise.all(Array.from({ length: options.lanes }, lane));
  if (failures.length > 0 || start === undefined || end === undefined)
    return {
      runs: 0,
      seconds: 0,
      machineCpuMs: 0,
      selfCpuMs: 0,
      treeCpuMs: {},
      latency: summarize(latency),
      failures: failures.length > 0 ? failures.slice(0, 5) : ['the window never closed'],
    };
  const treeCpuMs: Record<string, number | null> = {};
  for (const label of Object.keys(options.trees)) {
    const [a, b] = [start.trees[label], end.trees[label]];
    treeCpuMs[label] = a === undefined || b === undefined ? null : (b - a) * ticksToMs;
  }
  return {
    runs: options.runs,
    seconds: (end.at - start.at) / 1000,
    machineCpuMs: (end.machine - start.machine) * ticksToMs,
    selfCpuMs: end.self - start.self,
    treeCpuMs,
    latency: summarize(latency),
    failures,
  };
}
