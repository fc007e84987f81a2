// Builds the HTTP API (Fastify): JSON parsing with a payload limit, zod validation, bearer auth per
// tenant, the routes, the OpenAPI document at /openapi.json, health and readiness. It owns no run
// state.
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import { z } from 'zod';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
} from 'fastify-type-provider-zod';
import { KeelError } from '../domain/keel-error.ts';
import type { AgentRegistry } from '../engine/registry.ts';
import type { TenantRecord } from '../domain/records.ts';
import type { Store } from '../store/store.ts';
import { authenticateKey, bearerToken, LastUsedStamps, type Identity } from './auth.ts';
import { admitDelegated, authenticateDelegated, refuseDelegatedAdmin } from './delegated-auth.ts';
import { isDelegatedToken, type DelegatedTokens } from '../secrets/delegated-tokens.ts';
import { registerAuditTrail, requireAdminAudit } from './audit-trail.ts';
import { startAuditRetention } from './audit-retention.ts';
import { declareScope, isTenantPath, requireScope, routeScope } from './route-scopes.ts';
import { registerKeyRoutes } from './routes/keys.ts';
import { registerSecretRoutes } from './routes/secrets.ts';
import { registerApprovalWebhookRoutes } from './routes/approval-webhook.ts';
import { scheduleAreaOf } from '../store/schedule-area.ts';
import { SecretVault } from '../secrets/secret-vault.ts';
import { registerAuditRoutes } from './routes/audit.ts';
import { registerApprovalRoutes } from './routes/approvals.ts';
import { answerExpectationFailed, clientErrorHandler } from './client-errors.ts';
import { errorHandler } from './error-boundary.ts';
import { recordRouteMethods } from './method-not-allowed.ts';
import { readJsonBody } from './json-body.ts';
import { errorResponse } from './schemas.ts';
import { EventHub } from './event-hub.ts';
import type { LiveDeltas } from '../models/live-deltas.ts';
import type { SpendAdmissionPort } from './spend-admission.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerAdminPoolRoutes } from './routes/admin-pools.ts';
import { registerAdminMcpRoutes } from './routes/admin-mcp.ts';
import { registerAdminRetentionRoutes } from './routes/admin-retention.ts';
import { registerMcpRoute } from './routes/mcp.ts';
import type { PoolSnapshot } from '../scheduling/pool.ts';
import { registerEventRoutes } from './routes/events.ts';
import { registerTenantEventRoutes } from './routes/tenant-events.ts';
import { registerRunRoutes } from './routes/runs.ts';
import { registerRunLineageRoutes } from './routes/run-lineage.ts';
import { registerRunTreeRoutes } from './routes/run-tree.ts';
import { registerRunResultRoutes } from './routes/run-result.ts';
import { registerRunPayloadRoutes } from './routes/run-payloads.ts';
import { registerRunStepRoutes } from './routes/run-steps.ts';
import { registerRunSharedRoutes } from './routes/run-shared.ts';
import { registerRunVersionRoutes } from './routes/run-versions.ts';
import { registerAttemptRoutes } from './routes/attempts.ts';
import { registerScheduleRoutes } from './routes/schedules.ts';
import type { ScheduleService } from '../schedules/schedule-service.ts';
import { PAYLOAD_MAX_BYTES_DEFAULT } from '../config/defaults.ts';
import { registerUsageRoutes } from './routes/usage.ts';
import { registerAgentRoutes } from './routes/agents.ts';
import { registerMetricsRoute } from './routes/metrics.ts';
import type { DashboardSources } from './dashboard-sources.ts';
import { registerDashboard } from './routes/dashboard.ts';
import { isAdminSurface, refuseAdminOffItsListener } from './admin-listener.ts';
import { resolveAdminPrincipal } from './admin-auth.ts';
import { registerAdminPrincipalRoutes } from './routes/admin-principals.ts';
import { registerAdminNodeRoutes } from './routes/admin-nodes.ts';
import { registerBrowserPolicy } from './security-headers.ts';
import { registerKeyRateLimits } from './key-rate-limits.ts';
import type { RateWindows } from '../store/rate-windows.ts';

export interface ApiOptions {
  store: Store;
  registry: AgentRegistry;
  adminKey?: string | undefined;
  /** The tenants' secrets (/v1/secrets); default: one without a key, which answers secrets_unconfigured. */
  secrets?: SecretVault;
  payloadMaxBytes?: number;
  /** Steps list: inputs and outputs larger than this (JSON bytes) are previews (default 8 KiB). */
  stepPreviewMaxBytes?: number;
  /** Most runs one POST /v1/runs:batch may hold (default 1,000). */
  batchRunsMax?: number;
  /** Readiness beyond the store answering (e.g. the orchestrator is running). */
  ready?: () => boolean;
  logger?: import('fastify').FastifyBaseLogger;
  version?: string;
  /** Serves /v1/schedules when given. */
  schedules?: ScheduleService;
  /**
   * Ephemeral live events (model.delta) of runs executing in this process, written to SSE
   * followers.
   */
  live?: LiveDeltas;
  /**
   * Live data from other planes for the dashboard's pools, nodes and quotas pages (each optional).
   */
  dashboard?: DashboardSources;
  /** This process's effect pools, for GET /v1/admin/pools. */
  pools?: () => PoolSnapshot[];
  /**
   * This process's cache of tenants' model limits and budgets: an admin PATCH invalidates the
   * tenant at once.
   */
  tenantPolicy?: { invalidate(tenantId: string): void } | undefined;
  /** Audit entries older than this (ms) are pruned by an hourly pass; default: kept forever. */
  auditRetentionMs?: number | undefined;
  /**
   * The admin surface is served on its own listener (admin-listener.ts): through this one, its
   * routes answer 404.
   */
  separateAdmin?: boolean;
  /** Origins whose pages may call the API from a browser (CORS); default none. */
  corsOrigins?: readonly string[];
  /** Requests a minute for a key without its own limit; default unlimited. */
  keyRequestsPerMinute?: number | undefined;
  /** Checks per-run delegated tokens (Bearer kdt_…); absent: every such token is refused (401). */
  delegation?: DelegatedTokens | undefined;
  /** Rate windows shared by every API process (a multi-process store): per-key limits count there. */
  keyRateWindows?: RateWindows | undefined;
  /** Spend admission at POST /v1/runs (the model gateway); absent: runs are not checked here. */
  spend?: SpendAdmissionPort | undefined;
}

const NO_QUERY = z.strictObject({});
const IDENTITY = Symbol('keel.identity');
type WithIdentity = FastifyRequest & { [IDENTITY]?: Identity };

export async function buildApi(options: ApiOptions): Promise<FastifyInstance> {
  const payloadMaxBytes = options.payloadMaxBytes ?? PAYLOAD_MAX_BYTES_DEFAULT;
  const logging =
    options.logger !== undefined
      ? {
          loggerInstance: options.logger,
          logController: new LogController({ disableRequestLogging: true }),
        }
      : { logger: false };
  // frameworkErrors: bad URLs and the like; clientErrorHandler: requests Node's HTTP parser refused
  // (client-errors.ts).
  const app = Fastify({
    ...logging,
    bodyLimit: payloadMaxBytes,
    return503OnClosing: false,
    forceCloseConnections: true,
    frameworkErrors: errorHandler,
    clientErrorHandler,
    // Each request's id is in the log lines it causes and in its x-request-id response header: a
    // client's error carries it (keel/client's KeelApiError.requestId), so the two can be matched.
    genReqId: () => randomUUID(),
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  app.server.on('checkExpectation', answerExpectationFailed);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  // Every tenant route declares the scope a key needs for it (route-scopes.ts): checked as each
  // route is registered, so a route without one fails the start.
  app.addHook('onRoute', declareScope);
  // Every state-changing admin route is in the audit table (audit-trail.ts), or the start fails.
  app.addHook('onRoute', requireAdminAudit);
  const routeMethods = recordRouteMethods(app);
  // A /v1 route that takes no query parameters refuses any (400 validation_failed), as the others
  // refuse unknown ones: a misspelt filter must not silently return everything.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/') || route.schema?.querystring !== undefined) return;
    const response = route.schema?.response as Record<string, unknown> | undefined;
    route.schema = {
      ...route.schema,
      querystring: NO_QUERY,
      ...(response !== undefined && !('400' in response)
        ? {
            response: {
              ...response,
              400: errorResponse('A query parameter was sent: this operation takes none'),
            },
          }
        : {}),
    };
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({
      error: {
        code: 'not_found',
        message: `no route ${request.method} ${request.url.split('?')[0]}`,
      },
    });
  });
  // JSON only: text/plain would otherwise reach the routes as a string (it must be 415).
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', (_request, payload, done) => {
    readJsonBody(payload, payloadMaxBytes).then(
      (body) => done(null, body),
      (error: Error) => done(error, undefined),
    );
  });

  if (options.separateAdmin === true) app.addHook('onRequest', refuseAdminOffItsListener);
  await registerBrowserPolicy(app, { corsOrigins: options.corsOrigins ?? [] });

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Keel API',
        version: options.version ?? '0.1.0',
        description: 'Durable, multi-tenant runtime for AI agents',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });

  const closing = new AbortController();
  const hub = new EventHub(options.store);
  app.addHook('onClose', async () => {
    closing.abort();
    hub.close();
  });

  const stamps = new LastUsedStamps(options.store, (error) =>
    app.log.warn({ err: error }, 'could not record an API key’s last use'),
  );
  // Authenticates the tenant key (the identity route handlers and the audit log see), then checks
  // the route's scope: before the body is read, so a key without it learns nothing else.
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    const token = bearerToken(request);
    const delegated = token !== undefined && isDelegatedToken(token);
    const url = request.routeOptions.url;
    // A named platform admin's key is resolved here; the route's own check admits it.
    if (isAdminSurface(path)) {
      if (delegated) refuseDelegatedAdmin(`${request.method} ${url ?? path}`);
      return resolveAdminPrincipal(options.store, request);
    }
    if (!isTenantPath(path)) return;
    // A per-run delegated token: its run must be live, and it reaches only its own run's routes.
    if (delegated) {
      const identity = await authenticateDelegated(options.store, options.delegation, token);
      (request as WithIdentity)[IDENTITY] = identity;
      return admitDelegated(options.store, identity.delegation!, {
        method: request.method,
        url,
        params: request.params,
      });
    }
    const identity = await authenticateKey(options.store, request, stamps);
    (request as WithIdentity)[IDENTITY] = identity;
    const scope = url === undefined ? undefined : routeScope(request.method, url);
    if (scope !== undefined) requireScope(identity, scope, `${request.method} ${url}`);
  });
  const identityOf = (request: unknown): Identity => {
    const identity = (request as WithIdentity)[IDENTITY];
    if (identity === undefined) throw new KeelError('unauthorized', 'not authenticated');
    return identity;
  };
  const tenantOf = (request: unknown): TenantRecord => identityOf(request).tenant;
  await registerKeyRateLimits(app, {
    defaultPerMinute: options.keyRequestsPerMinute,
    identityOf: (request) => (request as WithIdentity)[IDENTITY],
    windows: options.keyRateWindows,
  });
  registerAuditTrail(app, {
    store: options.store,
    identityOf: (request) => (request as WithIdentity)[IDENTITY],
  });
  if (options.auditRetentionMs !== undefined) {
    const retention = startAuditRetention(options.store, options.auditRetentionMs, (error) =>
      app.log.error({ err: error }, 'audit retention pass failed'),
    );
    app.addHook('onClose', async () => retention.stop());
  }

  registerRunRoutes(app, {
    store: options.store,
    registry: options.registry,
    spend: options.spend,
    tenantOf,
    // A run started with a delegated token is a child of the token's run.
    parentRunOf: (request) => (request as WithIdentity)[IDENTITY]?.delegation?.runId ?? null,
    ...(options.stepPreviewMaxBytes === undefined
      ? {}
      : { stepPreviewMaxBytes: options.stepPreviewMaxBytes }),
    ...(options.batchRunsMax === undefined ? {} : { batchRunsMax: options.batchRunsMax }),
    waits: { hub, closing: closing.signal },
  });
  registerRunResultRoutes(app, { store: options.store, hub, tenantOf, closing: closing.signal });
  registerRunStepRoutes(app, { store: options.store, tenantOf });
  registerRunPayloadRoutes(app, { store: options.store, tenantOf });
  registerRunSharedRoutes(app, { store: options.store, tenantOf });
  registerRunLineageRoutes(app, { store: options.store, registry: options.registry, tenantOf });
  registerRunTreeRoutes(app, { store: options.store, tenantOf });
  registerRunVersionRoutes(app, { store: options.store, registry: options.registry, tenantOf });
  registerAttemptRoutes(app, { store: options.store, tenantOf });
  registerEventRoutes(app, {
    store: options.store,
    hub,
    tenantOf,
    closing: closing.signal,
    ...(options.live === undefined ? {} : { live: options.live }),
  });
  registerTenantEventRoutes(app, { store: options.store, hub, tenantOf, closing: closing.signal });
  registerAdminRoutes(app, {
    store: options.store,
    adminKey: options.adminKey,
    ...(options.tenantPolicy ? { tenantPolicy: options.tenantPolicy } : {}),
  });
  registerAdminPoolRoutes(app, { adminKey: options.adminKey, pools: options.pools });
  registerAdminPrincipalRoutes(app, { store: options.store, adminKey: options.adminKey });
  registerAdminNodeRoutes(app, { store: options.store, adminKey: options.adminKey });
  registerAdminMcpRoutes(app, { store: options.store, adminKey: options.adminKey });
  if ((options.store as { archives?: unknown }).archives !== undefined)
    registerAdminRetentionRoutes(app, { store: options.store, adminKey: options.adminKey });
  if (options.schedules !== undefined)
    registerScheduleRoutes(app, {
      schedules: options.schedules,
      store: options.store,
      adminKey: options.adminKey,
      tenantOf,
    });
  registerUsageRoutes(app, { store: options.store, tenantOf });
  registerKeyRoutes(app, { store: options.store, adminKey: options.adminKey, identityOf });
  registerAuditRoutes(app, { store: options.store, adminKey: options.adminKey, identityOf });
  registerSecretRoutes(app, {
    vault: options.secrets ?? new SecretVault(options.store, undefined),
    identityOf,
  });
  registerApprovalRoutes(app, { store: options.store, adminKey: options.adminKey, identityOf });
  registerApprovalWebhookRoutes(app, {
    store: options.store,
    vault: options.secrets ?? new SecretVault(options.store, undefined),
    allowlist: (tenantId) =>
      (options.schedules ?? scheduleAreaOf(options.store)).getWebhookAllowlist(tenantId),
    identityOf,
  });
  registerAgentRoutes(app, { store: options.store, registry: options.registry, tenantOf });
  registerMcpRoute(app, {
    store: options.store,
    registry: options.registry,
    hub,
    identityOf,
    version: options.version ?? '0.1.0',
  });
  registerMetricsRoute(app, { adminKey: options.adminKey });
  // The web app at / and its read-only /v1/dashboard routes.
  await registerDashboard(app, {
    store: options.store,
    registry: options.registry,
    tenantOf,
    sources: options.dashboard ?? {},
    adminKey: options.adminKey,
  });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const health = await options.store.health();
    const ready = health.reachable && health.changeFeed && (options.ready?.() ?? true);
    return reply.status(ready ? 200 : 503).send({
      ready,
      store: health.reachable ? 'ok' : 'unavailable',
      changeFeed: health.changeFeed ? 'ok' : 'reconnecting',
      durability: options.store.durability,
      notDurableCommits: options.store.notDurableCommits(),
    });
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  routeMethods.answerOtherMethods();
  return app;
}
