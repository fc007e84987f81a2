// Environment memory-time: integrates a cgroup's memory usage over wall time into GiB·s, sampling
// on a timer and at every lifecycle change, so a resident environment that holds memory while the
// run waits is charged for it and a destroyed or checkpointed one is not. Totals are kept per run;
// nothing here reads the store.
import type { SandboxEnvironment } from './driver.ts';

export const ACCOUNTING_SAMPLE_MS = 100;
const GIB = 1024 ** 3;

export interface RunAccounting {
  gibSeconds: number;
  cpuSeconds: number;
  peakMemoryBytes: number;
  wallMs: number;
  coldStarts: number;
  warmStarts: number;
  executions: number;
}

export const emptyAccounting = (): RunAccounting => ({
  gibSeconds: 0,
  cpuSeconds: 0,
  peakMemoryBytes: 0,
  wallMs: 0,
  coldStarts: 0,
  warmStarts: 0,
  executions: 0,
});

/** Follows one environment while it exists, adding its memory-time to `into`. */
export class MemoryMeter {
  private readonly env: SandboxEnvironment;
  private readonly into: RunAccounting;
  private lastAt = performance.now();
  private lastBytes: number;
  private readonly timer: NodeJS.Timeout;

  constructor(env: SandboxEnvironment, into: RunAccounting) {
    this.env = env;
    this.into = into;
    this.lastBytes = this.read();
    this.timer = setInterval(() => this.sample(), ACCOUNTING_SAMPLE_MS);
    this.timer.unref();
  }

  private read(): number {
    try {
      const counters = this.env.counters();
      this.into.peakMemoryBytes = Math.max(this.into.peakMemoryBytes, counters.peakMemoryBytes);
      return counters.memoryBytes;
    } catch {
      return 0;
    }
  }

  /**
   * Trapezoid over the last interval: precise enough at a 100 ms step for environments that live
   * seconds.
   */
  sample(): void {
    const now = performance.now();
    const bytes = this.read();
    this.into.gibSeconds += ((this.lastBytes + bytes) / 2 / GIB) * ((now - this.lastAt) / 1000);
    this.lastAt = now;
    this.lastBytes = bytes;
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}
