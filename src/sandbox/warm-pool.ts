// Ready sandboxes per profile, so a call does not wait for a cold start. A lease is never reused:
// a used sandbox is destroyed and replaced by a new one (a fresh uid, a fresh tmpfs workspace, a
// fresh holder), because a reset misses state the next tenant could see (the workspace root's mode
// and xattrs, files and IPC objects of the reused uid). The pool is bounded by its size and refills
// in the background.
import type { EnvironmentSpec, SandboxDriver, SandboxEnvironment } from './driver.ts';

export class WarmPool {
  private readonly ready: SandboxEnvironment[] = [];
  private readonly driver: SandboxDriver;
  private readonly size: number;
  private readonly specOf: () => EnvironmentSpec;
  private readonly starting = new Set<Promise<void>>();
  private closed = false;

  constructor(options: {
    driver: SandboxDriver;
    size: number;
    specOf: () => EnvironmentSpec;
  }) {
    this.driver = options.driver;
    this.size = options.size;
    this.specOf = options.specOf;
  }

  get available(): number {
    return this.ready.length;
  }

  /** A ready sandbox, or undefined when the pool is empty (the caller then starts one cold). */
  take(): SandboxEnvironment | undefined {
    const env = this.ready.pop();
    // The replacement starts after this turn: starting one does synchronous work (cgroup, spawn)
    // that the caller, who wants to run its command now, must not wait for.
    setImmediate(() => void this.refill());
    return env;
  }

  /**
   * Starts sandboxes until ready + starting reaches the size; resolves when every start under way
   * (these and earlier ones) has ended.
   */
  refill(): Promise<void> {
    const wanted = this.size - this.ready.length - this.starting.size;
    for (let i = 0; i < wanted && !this.closed; i++) {
      const start: Promise<void> = this.driver
        .create(this.specOf())
        .then(
          (env) => this.offer(env),
          () => undefined,
        )
        .finally(() => this.starting.delete(start));
      this.starting.add(start);
    }
    return Promise.all(this.starting).then(() => undefined);
  }

  private async offer(env: SandboxEnvironment): Promise<void> {
    if (this.closed || this.ready.length >= this.size) await env.destroy();
    else this.ready.push(env);
  }

  /**
   * Destroys a used sandbox: no lease is handed on (take() already started its replacement).
   */
  async giveBack(env: SandboxEnvironment): Promise<void> {
    await env.destroy();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.starting);
    await Promise.all(this.ready.splice(0).map((env) => env.destroy()));
  }
}
