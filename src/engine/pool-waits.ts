// A run's effects waiting in resource pools: while one waits in a pool's queue the run holds no run
// slot (RunExecution.enterPoolWait, counted apart by the orchestrator), and a wait that lasts
// POOL_WAIT_REPORT_MS is explained: the run's waitingReason becomes `pool_saturated` with a
// `run.waiting` event naming the pool, and a `run.resumed` event clears it when the slot is
// granted. Shorter waits are not written (under saturation that would add a commit per effect
// exactly when the system is busiest).
import type { RunPort } from './run-port.ts';
import { resumedEvent, waitingEvent } from '../domain/waiting-reasons.ts';

export const POOL_WAIT_REPORT_MS = 1_000;

/**
 * For the effect at `seq`: called when it queues in `pool`, returns what to call when it leaves the
 * queue (granted, aborted or refused). Idempotent.
 * @example
 * let left: (() => void) | undefined;
 * try { release = await pools.acquire(name, { ...request, onQueued: () => (left = queuedIn(name)) }); } finally { left?.(); }
 */
export function poolWaitReporter(x: RunPort, seq: number): (pool: string) => () => void {
  return (pool) => {
    const leave = x.enterPoolWait();
    const since = x.clock.now();
    let reported = false;
    const timer = setTimeout(() => {
      if (x.stopped !== undefined) return;
      reported = true;
      x.effects.reportedPoolWaits++;
      void x
        .commit({
          run: { waitingReason: 'pool_saturated' },
          events: [
            waitingEvent(
              'pool_saturated',
              since,
              `effect ${seq} waits for a slot of pool ${pool}`,
              { seq, pool },
            ),
          ],
        })
        .catch(() => {});
    }, POOL_WAIT_REPORT_MS);
    timer.unref();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      clearTimeout(timer);
      leave();
      if (!reported) return;
      const others = --x.effects.reportedPoolWaits;
      if (others > 0 || x.stopped !== undefined) return;
      void x
        .commit({
          run: { waitingReason: null },
          events: [resumedEvent('pool_saturated', since, x.clock.now(), { seq, pool })],
        })
        .catch(() => {});
    };
  };
}
