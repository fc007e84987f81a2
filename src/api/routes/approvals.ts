// Human approval and tool policy over HTTP: the tenant's pending (or decided) approval requests
// across runs in cursor pages (read scope), a decision on one call bound to its execution id and
// argument hash (operate scope; who decided is the key, audited by the audit trail), and the
// tenant's tool policy: read (read scope), replaced by a tenant admin or the platform admin.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { APPROVAL_NOTE_MAX_CHARS, type ApprovalRecord } from '../../domain/approvals.ts';
import { KeelError } from '../../domain/keel-error.ts';
import type { RedactionPolicy } from '../../domain/redaction-policy.ts';
import { ToolPolicy } from '../../domain/tool-policy.ts';
import type { Store } from '../../store/store.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import type { Identity } from '../auth.ts';
import { CURSOR_DESCRIPTION, decodeCursorOf, encodeCursor } from '../cursor.ts';
import { redactValue } from '../redaction.ts';
import {
  ErrorBody,
  PathId,
  PendingApproval,
  RunIdParams,
  TenantParams,
  errorResponse,
} from '../schemas.ts';

/** Most requests in one page of GET /v1/approvals. */
export const APPROVALS_PAGE_MAX = 200;

export interface ApprovalRoutesDeps {
  store: Store;
  adminKey: string | undefined;
  identityOf(request: unknown): Identity;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A request as its tenant sees it: the call's arguments under the tenant's redaction policy. */
export function approvalView(
  a: ApprovalRecord,
  redact: RedactionPolicy,
): z.infer<typeof PendingApproval> {
  return {
    runId: a.runId,
    executionId: a.executionId,
    seq: a.seq,
    agent: a.agent,
    tool: a.tool,
    args: redactValue(a.args, redact),
    argsHash: a.argsHash,
    risk: a.risk,
    rule: a.rule,
    reason: a.reason,
    status: a.status,
    requestedAt: iso(a.requestedAt)!,
    expiresAt: iso(a.expiresAt)!,
    decidedBy: a.decidedBy,
    decidedAt: iso(a.decidedAt),
    note: a.note,
  };
}

/** A page ends at a request: `<requestedAt ms>:<executionId>`. */
const APPROVAL_CURSOR_PATTERN = /^(\d{1,16}):(\S{1,200})$/;
const isApprovalCursor = (after: unknown): after is string =>
  typeof after === 'string' && APPROVAL_CURSOR_PATTERN.test(after);

const ApprovalsQuery = z.strictObject({
  status: z
    .enum(['pending', 'approved', 'denied', 'expired', 'all'])
    .default('pending')
    .describe('Which requests: pending (default), a decided status, or all'),
  runId: PathId.optional(),
  limit: z.coerce.number().int().min(1).max(APPROVALS_PAGE_MAX).default(50),
  cursor: z.string().max(500).optional().describe(CURSOR_DESCRIPTION),
});

const DecisionParams = RunIdParams.extend({ executionId: PathId });
const DecisionBody = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  argsHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe(
      'The argsHash shown with the request: when given, the decision applies only if the call is still that one (409 approval_mismatch otherwise)',
    ),
  note: z.string().max(APPROVAL_NOTE_MAX_CHARS).optional(),
});

const PolicyView = z.object({ policy: ToolPolicy.nullable() }).meta({ id: 'ToolPolicyView' });

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };

export function registerApprovalRoutes(app: FastifyInstance, deps: ApprovalRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store } = deps;

  r.get(
    '/v1/approvals',
    {
      schema: {
        summary: 'Approval requests of the tenant’s runs, newest first (pending unless asked)',
        tags: ['approvals'],
        querystring: ApprovalsQuery,
        response: {
          200: z.object({ approvals: z.array(PendingApproval), nextCursor: z.string().nullable() }),
          ...errors,
          400: errorResponse(`A bad filter or limit, or a bad cursor. ${CURSOR_DESCRIPTION}`),
        },
      },
    },
    async (request) => {
      const tenant = deps.identityOf(request).tenant;
      const q = request.query;
      const match =
        q.cursor === undefined
          ? undefined
          : APPROVAL_CURSOR_PATTERN.exec(decodeCursorOf(q.cursor, isApprovalCursor));
      const before =
        match === undefined || match === null
          ? undefined
          : { requestedAt: Number(match[1]), executionId: match[2]! };
      const rows = await store.listApprovals(tenant.id, {
        ...(q.status === 'all' ? {} : { status: q.status }),
        ...(q.runId === undefined ? {} : { runId: q.runId }),
        ...(before === undefined ? {} : { before }),
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return {
        approvals: page.map((a) => approvalView(a, tenant.redact)),
        nextCursor:
          rows.length > q.limit && last !== undefined
            ? encodeCursor(`${last.requestedAt}:${last.executionId}`)
            : null,
      };
    },
  );

  r.post(
    '/v1/runs/:id/approvals/:executionId',
    {
      schema: {
        summary:
          'Approve or deny a tool call the run waits on (operate scope); the decision is bound to this call and audited',
        tags: ['approvals'],
        params: DecisionParams,
        body: DecisionBody,
        response: {
          200: PendingApproval,
          ...errors,
          409: errorResponse(
            'approval_already_decided, approval_expired, approval_mismatch (argsHash differs) or run_terminal',
          ),
        },
      },
    },
    async (request) => {
      const identity = deps.identityOf(request);
      const { id, executionId } = request.params;
      const run = await store.getRun(id);
      if (run === null || run.tenantId !== identity.tenant.id)
        throw new KeelError('run_not_found', `run ${id} not found`);
      const { decision, argsHash, note } = request.body;
      if (argsHash !== undefined) {
        const found = await store.getApproval(id, executionId);
        if (found !== null && found.argsHash !== argsHash)
          throw new KeelError(
            'approval_mismatch',
            `the request of ${executionId} is for other arguments (argsHash ${found.argsHash})`,
          );
      }
      const decided = await store.decideApproval(id, executionId, {
        decision,
        decidedBy: identity.key.id,
        note: note ?? null,
      });
      return approvalView(decided, identity.tenant.redact);
    },
  );

  r.get(
    '/v1/policy',
    {
      schema: {
        summary:
          'The tenant’s tool policy (null: none; agents may add their own, the stricter applies)',
        tags: ['approvals'],
        response: { 200: PolicyView, 401: ErrorBody },
      },
    },
    async (request) => ({
      policy: await store.getToolPolicy(deps.identityOf(request).tenant.id),
    }),
  );

  r.put(
    '/v1/policy',
    {
      schema: {
        summary: 'Replace the tenant’s tool policy (admin scope)',
        tags: ['approvals'],
        body: ToolPolicy,
        response: { 200: PolicyView, 400: ErrorBody, 401: ErrorBody },
      },
    },
    async (request) => ({
      policy: await store.putToolPolicy(deps.identityOf(request).tenant.id, request.body),
    }),
  );

  for (const method of ['get', 'put'] as const) {
    r[method](
      '/v1/admin/tenants/:id/policy',
      {
        onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
        schema: {
          summary: method === 'get' ? 'A tenant’s tool policy' : 'Replace a tenant’s tool policy',
          tags: ['admin'],
          params: TenantParams,
          ...(method === 'put' ? { body: ToolPolicy } : {}),
          response: { 200: PolicyView, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        if ((await store.getTenant(id)) === null)
          throw new KeelError('tenant_not_found', `no tenant ${id}`);
        if (method === 'get') return { policy: await store.getToolPolicy(id) };
        return { policy: await store.putToolPolicy(id, request.body as ToolPolicy) };
      },
    );
  }
}

/** The run's pending requests, for GET /v1/runs/:id. */
export async function pendingApprovalsOf(
  store: Store,
  tenantId: string,
  runId: string,
  redact: RedactionPolicy,
): Promise<Array<z.infer<typeof PendingApproval>>> {
  const rows = await store.listApprovals(tenantId, { runId, status: 'pending', limit: 50 });
  return rows.map((a) => approvalView(a, redact));
}
