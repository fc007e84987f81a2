// The tenant's approver webhook over HTTP (admin scope): set it (an allowlisted URL, a signing
// secret by `secret:NAME` reference or generated, which events besides new requests), read it,
// remove it, and list its deliveries with their attempts. A generated secret is stored in the
// tenant's secrets (APPROVAL_WEBHOOK_SECRET) and shown once, in the answer that made it.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  APPROVAL_WEBHOOK_EVENTS,
  type ApprovalNotificationRecord,
  type ApprovalWebhook,
  WEBHOOK_SIGNATURE_HEADER,
} from '../../domain/approval-webhooks.ts';
import { KeelError } from '../../domain/keel-error.ts';
import { assertWebhookAllowed } from '../../schedules/webhook-allowlist.ts';
import { secretRefName, type SecretVault } from '../../secrets/secret-vault.ts';
import type { Store } from '../../store/store.ts';
import type { Identity } from '../auth.ts';
import { CURSOR_DESCRIPTION, decodeCursorOf, encodeCursor } from '../cursor.ts';
import { ErrorBody, errorResponse } from '../schemas.ts';

/** The secret a generated signing key is stored as. */
export const GENERATED_SECRET_NAME = 'APPROVAL_WEBHOOK_SECRET';
const GENERATED_SECRET_BYTES = 32;
const DELIVERIES_PAGE_MAX = 200;

export interface ApprovalWebhookRoutesDeps {
  store: Store;
  vault: SecretVault;
  /** The tenant's webhook allowlist (origins), as the platform admin set it. */
  allowlist(tenantId: string): Promise<string[]>;
  identityOf(request: unknown): Identity;
}

const Webhook = z
  .object({
    url: z.string(),
    secret: z.string().describe('The secret:NAME whose current value signs each delivery'),
    events: z.array(z.enum(APPROVAL_WEBHOOK_EVENTS)),
    updatedAt: z.string(),
  })
  .meta({ id: 'ApprovalWebhook' });

const WebhookBody = z.strictObject({
  url: z
    .string()
    .url()
    .describe('Where to POST; its origin must be on the tenant’s webhook allowlist'),
  secret: z
    .string()
    .optional()
    .describe(
      `secret:NAME of a tenant secret that signs deliveries; omitted: Keel generates one, stores it as ${GENERATED_SECRET_NAME} and returns it once`,
    ),
  events: z
    .array(z.enum(APPROVAL_WEBHOOK_EVENTS))
    .max(APPROVAL_WEBHOOK_EVENTS.length)
    .default(['requested'])
    .describe('Which events to send; requested is always sent'),
});

const Delivery = z.object({
  id: z.string(),
  runId: z.string(),
  executionId: z.string(),
  kind: z.enum(APPROVAL_WEBHOOK_EVENTS),
  url: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  lastError: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  createdAt: z.string(),
});

const DeliveriesQuery = z.strictObject({
  runId: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(DELIVERIES_PAGE_MAX).default(50),
  cursor: z.string().optional().describe(CURSOR_DESCRIPTION),
});

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function webhookView(w: ApprovalWebhook): z.infer<typeof Webhook> {
  return { url: w.url, secret: w.secretRef, events: w.events, updatedAt: iso(w.updatedAt)! };
}

function deliveryView(n: ApprovalNotificationRecord): z.infer<typeof Delivery> {
  return {
    id: n.id,
    runId: n.runId,
    executionId: n.executionId,
    kind: n.kind,
    url: n.url,
    status: n.status,
    attempts: n.attempts,
    nextAttemptAt: n.status === 'pending' ? iso(n.nextAttemptAt) : null,
    lastError: n.lastError,
    deliveredAt: iso(n.deliveredAt),
    createdAt: iso(n.createdAt)!,
  };
}

/** A page ends at a notification: `<createdAt ms>:<id>`. */
const DELIVERY_CURSOR_PATTERN = /^(\d{1,16}):(apn_\S{1,300})$/;
const isDeliveryCursor = (after: unknown): after is string =>
  typeof after === 'string' && DELIVERY_CURSOR_PATTERN.test(after);

export function registerApprovalWebhookRoutes(
  app: FastifyInstance,
  deps: ApprovalWebhookRoutesDeps,
): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store, vault } = deps;
  const tenant = (request: unknown) => deps.identityOf(request).tenant.id;

  /** The reference to sign with, and the generated value to show once (if one was made). */
  async function signingSecret(
    tenantId: string,
    ref: string | undefined,
  ): Promise<{ ref: string; generated?: string }> {
    if (ref !== undefined) {
      const name = secretRefName(ref);
      if ((await store.getSecret(tenantId, name)) === null)
        throw new KeelError('secret_not_found', `the tenant has no secret ${name}`);
      return { ref };
    }
    const value = randomBytes(GENERATED_SECRET_BYTES).toString('base64url');
    const exists = (await store.getSecret(tenantId, GENERATED_SECRET_NAME)) !== null;
    if (exists) await vault.rotate(tenantId, GENERATED_SECRET_NAME, value);
    else await vault.create(tenantId, GENERATED_SECRET_NAME, value);
    return { ref: `secret:${GENERATED_SECRET_NAME}`, generated: value };
  }

  r.put(
    '/v1/approval-webhook',
    {
      schema: {
        summary: 'Set the tenant’s approver webhook (admin scope)',
        description: `Keel POSTs each approval request (and, if asked, its decision and expiry) to the URL, signed in the ${WEBHOOK_SIGNATURE_HEADER} header (t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">) with the secret’s current value, with an Idempotency-Key that is the same on every attempt. Retried with backoff; at most one notification per request and event.`,
        tags: ['approvals'],
        body: WebhookBody,
        response: {
          200: z.object({
            webhook: Webhook,
            signingSecret: z
              .string()
              .optional()
              .describe('The generated secret, shown this once (when no secret was given)'),
          }),
          ...errors,
          400: errorResponse(
            'validation_failed, webhook_not_allowed (the origin is not on the allowlist), secret_reference_invalid, secrets_unconfigured',
          ),
          404: errorResponse('secret_not_found: the referenced secret does not exist'),
        },
      },
    },
    async (request) => {
      const tenantId = tenant(request);
      const { url, secret, events } = request.body;
      assertWebhookAllowed(url, await deps.allowlist(tenantId));
      const signing = await signingSecret(tenantId, secret);
      const webhook = await store.putApprovalWebhook({
        tenantId,
        url,
        secretRef: signing.ref,
        events: [...new Set(['requested' as const, ...events])],
      });
      return {
        webhook: webhookView(webhook),
        ...(signing.generated === undefined ? {} : { signingSecret: signing.generated }),
      };
    },
  );

  r.get(
    '/v1/approval-webhook',
    {
      schema: {
        summary: 'The tenant’s approver webhook, or null (admin scope)',
        tags: ['approvals'],
        response: { 200: z.object({ webhook: Webhook.nullable() }), ...errors },
      },
    },
    async (request) => {
      const webhook = await store.getApprovalWebhook(tenant(request));
      return { webhook: webhook === null ? null : webhookView(webhook) };
    },
  );

  r.delete(
    '/v1/approval-webhook',
    {
      schema: {
        summary:
          'Remove the tenant’s approver webhook (admin scope); notifications not yet delivered are dropped at their next attempt',
        tags: ['approvals'],
        response: {
          200: z.object({ deleted: z.literal(true) }),
          ...errors,
          404: errorResponse('approval_webhook_not_found: the tenant has no approver webhook'),
        },
      },
    },
    async (request) => {
      if (!(await store.deleteApprovalWebhook(tenant(request))))
        throw new KeelError('approval_webhook_not_found', 'the tenant has no approver webhook');
      return { deleted: true as const };
    },
  );

  r.get(
    '/v1/approval-webhook/deliveries',
    {
      schema: {
        summary:
          'The approver webhook’s notifications, newest first, with their delivery state and attempts (admin scope)',
        tags: ['approvals'],
        querystring: DeliveriesQuery,
        response: {
          200: z.object({ deliveries: z.array(Delivery), nextCursor: z.string().nullable() }),
          ...errors,
          400: errorResponse(`A bad filter or limit, or a bad cursor. ${CURSOR_DESCRIPTION}`),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const match =
        q.cursor === undefined
          ? undefined
          : DELIVERY_CURSOR_PATTERN.exec(decodeCursorOf(q.cursor, isDeliveryCursor));
      const rows = await store.listApprovalNotifications(tenant(request), {
        ...(q.runId === undefined ? {} : { runId: q.runId }),
        ...(match === undefined || match === null
          ? {}
          : { before: { createdAt: Number(match[1]), id: match[2]! } }),
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return {
        deliveries: page.map(deliveryView),
        nextCursor:
          rows.length > q.limit && last !== undefined
            ? encodeCursor(`${last.createdAt}:${last.id}`)
            : null,
      };
    },
  );
}
