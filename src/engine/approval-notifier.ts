// Delivers the approver webhook's outbox: claims due notifications with a lease, POSTs each signed
// with the tenant's current secret (HMAC-SHA256, `keel-signature`) and with an `Idempotency-Key`
// (the notification id, the same on every attempt), and records each attempt under the claim's
// fencing token. At least once: a process dying between the POST and the record sends it again,
// with the same key. Backoff, attempt limit and timeout are the schedule notifier's; the origin is
// checked again against the tenant's webhook allowlist at every attempt. Never logs the secret.
import { randomUUID } from 'node:crypto';
import {
  type ApprovalNotificationRecord,
  signWebhookBody,
  WEBHOOK_SIGNATURE_HEADER,
} from '../domain/approval-webhooks.ts';
import type { Clock } from '../domain/clock.ts';
import type { Json } from '../domain/json.ts';
import { isKeelError } from '../domain/keel-error.ts';
import { webhookOrigin } from '../schedules/webhook-allowlist.ts';
import {
  deliveryOutcome,
  logDelivery,
  postNotification,
  WEBHOOK_TIMEOUT_MS,
} from '../schedules/webhook-notifier.ts';
import type { Store } from '../store/store.ts';

const NOTIFICATIONS_PER_TICK_MAX = 20;
const NOTIFICATION_LEASE_MS = 2 * WEBHOOK_TIMEOUT_MS;
export const APPROVAL_NOTIFIER_TICK_MS_DEFAULT = 1_000;

type NotifierStore = Pick<
  Store,
  | 'capabilities'
  | 'getApprovalWebhook'
  | 'claimApprovalNotifications'
  | 'finishApprovalNotification'
  | 'releaseApprovalNotificationClaims'
>;

export interface ApprovalNotifierOptions {
  store: NotifierStore;
  clock: Clock;
  /** The tenant's webhook allowlist (origins), as operators set it for schedules too. */
  allowlist(tenantId: string): Promise<string[]>;
  /** The current value of the tenant's secret `ref` (`secret:NAME`). */
  revealSecret(tenantId: string, ref: string): Promise<string>;
  /** The call's arguments as the tenant's redaction policy shows them (default: unchanged). */
  redactArgs?(tenantId: string, args: Json): Promise<Json>;
  owner?: string;
  tickMs?: number;
  random?: () => number;
  log?: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
}

export class ApprovalNotifier {
  readonly owner: string;
  readonly #o: ApprovalNotifierOptions;
  #timer: unknown;
  #stopped = true;
  #ticking: Promise<unknown> = Promise.resolve();

  constructor(options: ApprovalNotifierOptions) {
    this.#o = options;
    this.owner = options.owner ?? `approval-notifier-${randomUUID()}`;
  }

  /**
   * Starts the loop. On a store this process owns alone a dead predecessor's claims are freed at
   * once; a shared store waits for their leases to expire (their holders may be alive).
   */
  async start(): Promise<void> {
    if (!this.#stopped) return;
    this.#stopped = false;
    if (!this.#o.store.capabilities.multiProcess)
      await this.#o.store.releaseApprovalNotificationClaims(this.owner);
    this.#arm();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#o.clock.clearTimeout(this.#timer);
    await this.#ticking;
  }

  #arm(): void {
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#ticking = this.deliverDue()
        .catch((error: unknown) =>
          this.#o.log?.('error', 'approval notification pass failed', { error: String(error) }),
        )
        .finally(() => this.#arm());
    }, this.#o.tickMs ?? APPROVAL_NOTIFIER_TICK_MS_DEFAULT);
  }

  /** Delivers what is due now; returns how many attempts it made. */
  async deliverDue(): Promise<number> {
    const { store, clock } = this.#o;
    const due = await store.claimApprovalNotifications(
      this.owner,
      clock.now(),
      NOTIFICATION_LEASE_MS,
      NOTIFICATIONS_PER_TICK_MAX,
    );
    await Promise.all(due.map((n) => this.#deliver(n)));
    return due.length;
  }

  /** The reason not to call at all (null: call), checked at every attempt. */
  async #refusal(n: ApprovalNotificationRecord): Promise<string | null> {
    const allowlist = await this.#o.allowlist(n.tenantId);
    if (!allowlist.includes(webhookOrigin(n.url)))
      return 'webhook_not_allowed: the origin is no longer on the tenant allowlist';
    return null;
  }

  async #post(n: ApprovalNotificationRecord): Promise<string | null> {
    const webhook = await this.#o.store.getApprovalWebhook(n.tenantId);
    if (webhook === null) return 'approval_webhook_not_found: the tenant removed its webhook';
    const secret = await this.#o.revealSecret(n.tenantId, webhook.secretRef);
    const payload = n.payload as Record<string, Json>;
    const args =
      this.#o.redactArgs === undefined
        ? payload.args
        : await this.#o.redactArgs(n.tenantId, payload.args ?? null);
    const body = JSON.stringify({ ...payload, args });
    return postNotification(n.url, n.id, body, {
      'user-agent': 'keel-approvals',
      'keel-event': `approval.${n.kind}`,
      [WEBHOOK_SIGNATURE_HEADER]: signWebhookBody(
        secret,
        Math.floor(this.#o.clock.now() / 1000),
        body,
      ),
    });
  }

  async #deliver(n: ApprovalNotificationRecord): Promise<void> {
    const { store, clock } = this.#o;
    const attempt = n.attempts + 1;
    let error: string | null;
    let retry = true;
    try {
      error = await this.#refusal(n);
      if (error !== null) retry = false;
      else error = await this.#post(n);
    } catch (e) {
      // A missing secret or key is the tenant's to fix: retried like a failed call, with its code.
      error = isKeelError(e)
        ? `${e.code}: ${e.message}`
        : e instanceof Error
          ? e.message
          : String(e);
    }
    const outcome = deliveryOutcome(error, retry, attempt, clock.now(), this.#o.random);
    await store.finishApprovalNotification(n.id, n.claimToken, outcome, clock.now());
    logDelivery(this.#o.log, 'approval', n, attempt, outcome);
  }
}
