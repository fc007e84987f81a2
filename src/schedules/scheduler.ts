// The leaderless scheduler: runs in every server process. Each tick claims the schedules that need
// a pass (a lease with a fencing token, so concurrent schedulers split the work instead of
// repeating it), plans each pass and commits it atomically under that token, then delivers due
// failure notifications. Two schedulers, or one with a skewed clock, can never create two runs for
// one fire: the fire's primary key (scheduleId, logicalTime) commits with its run.
import { randomUUID } from 'node:crypto';
import { isKeelError } from '../domain/keel-error.ts';
import type { AgentRegistry } from '../engine/registry.ts';
import type { ScheduleClaim, ScheduleStore } from '../store/schedule-store.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../domain/clock.ts';
import { SCHEDULER_LEASE_MS_DEFAULT, SCHEDULER_TICK_MS_DEFAULT } from '../config/defaults.ts';
import { planPass } from './schedule-pass.ts';
import { WebhookNotifier } from './webhook-notifier.ts';

const SCHEDULES_PER_CLAIM_MAX = 200;
/** Claim rounds in one tick: up to 4,000 schedules are looked at per tick and process. */
const CLAIM_ROUNDS_PER_TICK_MAX = 20;

export interface SchedulerOptions {
  runs: Store;
  schedules: ScheduleStore;
  registry: AgentRegistry;
  clock: Clock;
  owner?: string;
  tickMs?: number;
  leaseMs?: number;
  log?: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
}

export class Scheduler {
  readonly owner: string;
  readonly #o: SchedulerOptions;
  readonly #notifier: WebhookNotifier;
  #timer: unknown;
  #stopped = true;
  /** Ticks run one at a time: a tick asked for while one runs waits for it. */
  #ticking: Promise<void> = Promise.resolve();

  constructor(options: SchedulerOptions) {
    this.#o = options;
    this.owner = options.owner ?? `scheduler-${randomUUID()}`;
    this.#notifier = new WebhookNotifier({
      schedules: options.schedules,
      clock: options.clock,
      owner: this.owner,
      log: options.log,
    });
  }

  /**
   * Starts the loop. On a store this process owns alone (the SQLite file under its lock) a dead
   * predecessor's claims are freed at once; a shared store waits for their leases to expire
   * instead, since their holders may be alive.
   */
  async start(): Promise<void> {
    if (!this.#stopped) return;
    this.#stopped = false;
    if (!this.#o.runs.capabilities.multiProcess)
      await this.#o.schedules.expireForeignClaims(this.owner);
    this.#arm();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#o.clock.clearTimeout(this.#timer);
    await this.#ticking;
  }

  /**
   * One pass over everything that is due now (the loop calls it every tick; tests call it after
   * moving the clock).
   */
  tick(): Promise<void> {
    const next = this.#ticking.then(() => this.#tickOnce());
    this.#ticking = next.catch(() => {});
    return next;
  }

  #arm(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.tick()
        .catch((error: unknown) =>
          this.#o.log?.('error', 'scheduler tick failed', { error: String(error) }),
        )
        .finally(() => this.#arm());
    }, this.#o.tickMs ?? SCHEDULER_TICK_MS_DEFAULT);
  }

  async #tickOnce(): Promise<void> {
    const { schedules, clock } = this.#o;
    for (let round = 0; round < CLAIM_ROUNDS_PER_TICK_MAX; round++) {
      const claims = await schedules.claimSchedules(
        this.owner,
        clock.now(),
        this.#o.leaseMs ?? SCHEDULER_LEASE_MS_DEFAULT,
        SCHEDULES_PER_CLAIM_MAX,
      );
      // Passes over different schedules are independent: run together, their commits share
      // group-commit transactions.
      await Promise.all(claims.map((claim) => this.#pass(claim)));
      if (claims.length < SCHEDULES_PER_CLAIM_MAX) break;
    }
    await this.#notifier.deliverDue();
  }

  async #pass(claim: ScheduleClaim): Promise<void> {
    const { schedules, clock } = this.#o;
    try {
      const now = clock.now();
      const commit = await planPass(
        {
          runs: this.#o.runs,
          schedules,
          registry: this.#o.registry,
          owner: this.owner,
          recheckMs: this.#o.tickMs ?? SCHEDULER_TICK_MS_DEFAULT,
        },
        claim,
        now,
      );
      await schedules.commitSchedule(commit, now);
      const started = (commit.createRuns ?? []).length;
      const missed = (commit.newFires ?? []).filter((f) => f.status === 'missed').length;
      if (started > 0 || missed > 0)
        this.#o.log?.('info', 'schedule fired', { scheduleId: claim.schedule.id, started, missed });
    } catch (error) {
      // A lost claim (another scheduler took over after our lease expired) is expected and
      // harmless. Any other failure gives the claim up, so the next tick retries instead of waiting
      // for the lease to expire.
      const stale = isKeelError(error) && error.code === 'stale_write';
      this.#o.log?.(stale ? 'info' : 'error', 'schedule pass not applied', {
        scheduleId: claim.schedule.id,
        error: String(error),
      });
      if (!stale)
        await schedules.releaseClaim(claim.schedule.id, this.owner, claim.token).catch(() => {});
    }
  }
}
