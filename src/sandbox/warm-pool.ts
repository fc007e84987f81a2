// Ready sandboxes per profile, so a call does not wait for a cold start. A sandbox goes back to the
// pool only after a verified clean (no process left, workspace empty, one mount, fresh holder) and
// never for single-use profiles; anything that fails the check is destroyed. The pool is bounded by
// its size and refills in the background.
import type { EnvironmentSpec, SandboxDriver, SandboxEnvironment } from './driver.ts';

export class WarmPool {
  private readonly ready: SandboxEnvironment[] = [];
  private readonly driver: SandboxDriver;
  private readonly size: number;
  private readonly singleUse: boolean;
  private readonly specOf: () => EnvironmentSpec;
  private filling = 0;
  /** Taken and not yet given back: they count toward the size, since a reusable one comes back. */
  private readonly lent = new Set<SandboxEnvironment>();
  private closed = false;
  /** Sandboxes refused by the clean check: a sign something escaped its reset. */
  rejected = 0;

  constructor(options: {
    driver: SandboxDriver;
    size: number;
    singleUse: boolean;
    specOf: () => EnvironmentSpec;
  }) {
    this.driver = options.driver;
    this.size = options.size;
    this.singleUse = options.singleUse;
    this.specOf = options.specOf;
  }

  get available(): number {
    return this.ready.length;
  }

  /** A ready sandbox, or undefined when the pool is empty (the caller then starts one cold). */
  take(): SandboxEnvironment | undefined {
    const env = this.ready.pop();
    if (env !== undefined && !this.singleUse) this.lent.add(env);
    void this.refill();
    return env;
  }

  /** Starts sandboxes until ready + starting reaches the size; resolves when they are all ready. */
  refill(): Promise<void> {
    const wanted = this.size - this.ready.length - this.filling - this.lent.size;
    const starts: Array<Promise<void>> = [];
    for (let i = 0; i < wanted && !this.closed; i++) {
      this.filling++;
      starts.push(
        this.driver
          .create(this.specOf())
          .then(
            (env) => this.offer(env),
            () => undefined,
          )
          .finally(() => this.filling--),
      );
    }
    return Promise.all(starts).then(() => undefined);
  }

  private async offer(env: SandboxEnvironment): Promise<void> {
    if (this.closed || this.ready.length + this.lent.size >= this.size) await env.destroy();
    else this.ready.push(env);
  }

  /** Takes a used sandbox back if it verifies clean; otherwise destroys it. */
  async giveBack(env: SandboxEnvironment): Promise<boolean> {
    this.lent.delete(env);
    if (
      this.singleUse ||
      this.closed ||
      this.ready.length + this.filling + this.lent.size >= this.size
    ) {
      await env.destroy();
      void this.refill();
      return false;
    }
    // A reset that throws (say, a mount it cannot remove) is a failed clean check like any other.
    if (!(await env.resetAndVerify().catch(() => false))) {
      this.rejected++;
      await env.destroy();
      void this.refill();
      return false;
    }
    await this.offer(env);
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.filling > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await Promise.all(this.ready.splice(0).map((env) => env.destroy()));
  }
}
