// Delivers failure notifications from the outbox: claims due ones with a lease, POSTs each with an
// `Idempotency-Key` (the notification id, the same on every attempt), and records the attempt under
// the claim's fencing token. Delivery is at least once (a process dying between the POST and the
// record sends it again, with the same key); it retries with jittered exponential backoff and gives
// up after a bounded number of attempts.
import { backoffDelayMs } from '../domain/backoff.ts';
import type { ScheduleStore, NotificationRecord } from '../store/schedule-store.ts';
import type { Clock } from '../domain/clock.ts';
import { webhookOrigin } from './webhook-allowlist.ts';

export const WEBHOOK_ATTEMPTS_MAX = 8;
export const WEBHOOK_TIMEOUT_MS = 10_000;
export const WEBHOOK_BACKOFF_BASE_MS = 1_000;
export const WEBHOOK_BACKOFF_MAX_MS = 10 * 60_000;
const NOTIFICATIONS_PER_TICK_MAX = 20;
const NOTIFICATION_LEASE_MS = 2 * WEBHOOK_TIMEOUT_MS;

export interface WebhookNotifierOptions {
  schedules: ScheduleStore;
  clock: Clock;
  owner: string;
  random?: () => number;
  log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

/** What one delivery attempt comes to: delivered, or failed with when to try again (null: never). */
export type DeliveryOutcome =
  | { delivered: true }
  | { delivered: false; error: string; retryAt: number | null };

/**
 * The outcome of attempt `attempt`: `error` null is delivered; a failure is retried after a backoff
 * while `retry` holds and attempts are left.
 */
export function deliveryOutcome(
  error: string | null,
  retry: boolean,
  attempt: number,
  now: number,
  random?: () => number,
): DeliveryOutcome {
  if (error === null) return { delivered: true };
  return {
    delivered: false,
    error,
    retryAt: retry && attempt < WEBHOOK_ATTEMPTS_MAX ? now + backoffMs(attempt, random) : null,
  };
}

/**
 * POSTs one notification body: JSON, never following a redirect, cut off after
 * WEBHOOK_TIMEOUT_MS, with the notification id as `Idempotency-Key` (the same on every attempt).
 * Returns null when the receiver took it (2xx), else why not; a network error throws.
 */
export async function postNotification(
  url: string,
  notificationId: string,
  body: string,
  headers: Record<string, string>,
): Promise<string | null> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    headers: { 'content-type': 'application/json', 'idempotency-key': notificationId, ...headers },
    body,
  });
  await res.body?.cancel();
  return res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`;
}

/** Logs one delivery attempt of a `what` notification (schedule, approval) and its outcome. */
export function logDelivery(
  log:
    | ((level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void)
    | undefined,
  what: string,
  n: { id: string; runId: string | null },
  attempt: number,
  outcome: DeliveryOutcome,
): void {
  if (outcome.delivered) {
    log?.('info', `${what} notification delivered`, {
      notificationId: n.id,
      runId: n.runId,
      attempt,
    });
    return;
  }
  log?.('warn', `${what} notification attempt failed`, {
    notificationId: n.id,
    runId: n.runId,
    attempt,
    error: outcome.error,
    willRetry: outcome.retryAt !== null,
  });
}

/**
 * Delay before attempt `attempt + 1`: exponential with equal jitter (at least half the ceiling),
 * capped.
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return backoffDelayMs(
    {
      initialDelayMs: WEBHOOK_BACKOFF_BASE_MS,
      maxDelayMs: WEBHOOK_BACKOFF_MAX_MS,
      multiplier: 2,
      jitter: 'equal',
    },
    attempt,
    random,
  );
}

export class WebhookNotifier {
  readonly #o: WebhookNotifierOptions;

  constructor(options: WebhookNotifierOptions) {
    this.#o = options;
  }

  /** Delivers what is due now; returns how many attempts it made. */
  async deliverDue(): Promise<number> {
    const { schedules, clock, owner } = this.#o;
    const due = await schedules.claimNotifications(
      owner,
      clock.now(),
      NOTIFICATION_LEASE_MS,
      NOTIFICATIONS_PER_TICK_MAX,
    );
    await Promise.all(due.map((n) => this.#deliver(n)));
    return due.length;
  }

  async #deliver(n: NotificationRecord): Promise<void> {
    const { schedules, clock } = this.#o;
    const attempt = n.attempts + 1;
    let error: string | null = null;
    let retry = true;
    // The allowlist is checked again at delivery: an origin removed since the schedule was written
    // is not called.
    const allowed = (await schedules.getWebhookAllowlist(n.tenantId)).includes(
      webhookOrigin(n.url),
    );
    if (!allowed) {
      error = 'webhook_not_allowed: the origin is no longer on the tenant allowlist';
      retry = false;
    } else {
      try {
        error = await postNotification(n.url, n.id, JSON.stringify(n.payload), {
          'user-agent': 'keel-schedules',
        });
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
    }
    const outcome = deliveryOutcome(error, retry, attempt, clock.now(), this.#o.random);
    await schedules.finishNotification(n.id, n.claimToken, outcome, clock.now());
    logDelivery(this.#o.log, 'schedule', n, attempt, outcome);
  }
}
