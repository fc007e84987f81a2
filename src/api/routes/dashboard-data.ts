// /v1/dashboard/*: the read-only JSON the dashboard's tenant, pools and nodes pages need and the runs API lacks.
// Tenant-scoped like every /v1 route (the caller's API key); built from the store plus optional
// live sources from other planes. A source that is not plugged in is answered as `available: false`
// with a reason, never faked.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AgentRegistry } from '../../engine/registry.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { Store } from '../../store/store.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import {
  queueRows,
  throughputSeries,
  usageByAgent,
  usageByTenant,
} from '../dashboard-aggregates.ts';
import {
  NodesOverview,
  PoolsOverview,
  PoolsQuery,
  TenantOverview,
  TenantsOverview,
} from '../dashboard-schemas.ts';
import type { DashboardSources, TenantQuotaSnapshot } from '../dashboard-sources.ts';
import { ErrorBody } from '../schemas.ts';

/**
 * Points per throughput chart: the bucket width is the window divided by this (at least
 * THROUGHPUT_BUCKET_MIN_MS).
 */
export const THROUGHPUT_POINTS = 60;
export const THROUGHPUT_BUCKET_MIN_MS = 10_000;

export interface DashboardDataDeps {
  store: Store;
  registry: AgentRegistry;
  tenantOf(request: unknown): TenantRecord;
  sources: DashboardSources;
  /** KEEL_ADMIN_KEY: the operator's view of all tenants needs it (and is off without it). */
  adminKey?: string | undefined;
}

function quotaView(quota: TenantQuotaSnapshot | null | undefined) {
  return quota === undefined
    ? { available: false as const, reason: 'per-tenant quotas are not configured in this Keel' }
    : quota === null
      ? { available: false as const, reason: 'no quota is set for this tenant' }
      : { available: true as const, ...quota };
}

const errors = { 400: ErrorBody, 401: ErrorBody };

export function registerDashboardDataRoutes(app: FastifyInstance, deps: DashboardDataDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { store, sources } = deps;

  r.get(
    '/v1/dashboard/tenant',
    {
      schema: {
        summary: 'The caller’s tenant: usage, cost per success, quotas',
        tags: ['dashboard'],
        response: { 200: TenantOverview, ...errors },
      },
    },
    async (request) => {
      const tenant = deps.tenantOf(request);
      const { totals, usage } = usageByAgent(await store.summarizeRuns(tenant.id));
      const quota = sources.quotas === undefined ? undefined : await sources.quotas(tenant.id);
      return {
        tenant: { id: tenant.id, name: tenant.name },
        agents: deps.registry.list().map((a) => ({ name: a.name, version: a.version })),
        totals,
        usage,
        quotas: quotaView(quota),
      };
    },
  );

  r.get(
    '/v1/dashboard/pools',
    {
      schema: {
        summary: 'Queues, oldest ages and throughput over time',
        tags: ['dashboard'],
        querystring: PoolsQuery,
        response: { 200: PoolsOverview, ...errors },
      },
    },
    async (request) => {
      const tenant = deps.tenantOf(request);
      const now = Date.now();
      const windowMs = request.query.minutes * 60_000;
      const bucketMs = Math.max(
        THROUGHPUT_BUCKET_MIN_MS,
        Math.ceil(windowMs / THROUGHPUT_POINTS / 1000) * 1000,
      );
      const since = now - windowMs;
      const [rows, ended, pools] = await Promise.all([
        store.summarizeRuns(tenant.id),
        store.countEndedRuns(tenant.id, since, bucketMs),
        sources.pools?.(),
      ]);
      return {
        at: new Date(now).toISOString(),
        runQueues: queueRows(rows, now),
        throughput: {
          bucketMs,
          since: new Date(since).toISOString(),
          buckets: throughputSeries(ended, since, now, bucketMs),
        },
        pools:
          pools === undefined
            ? {
                available: false as const,
                reason:
                  'this Keel exposes no in-process pool metrics (model and tool pools report here once the scheduling plane provides them)',
              }
            : { available: true as const, pools },
      };
    },
  );

  r.get(
    '/v1/admin/dashboard/tenants',
    {
      onRequest: async (request) => authorizeAdmin(request, deps.adminKey),
      schema: {
        summary: 'Every tenant’s usage, cost per success and quotas (admin key)',
        tags: ['admin', 'dashboard'],
        response: { 200: TenantsOverview, ...errors, 404: ErrorBody },
      },
    },
    async () => {
      const tenants = usageByTenant(await store.summarizeTenants(), Date.now());
      const quotas = await Promise.all(
        tenants.map(async (t) => (sources.quotas === undefined ? undefined : sources.quotas(t.id))),
      );
      return { tenants: tenants.map((t, i) => ({ ...t, quotas: quotaView(quotas[i]) })) };
    },
  );

  r.get(
    '/v1/dashboard/nodes',
    {
      schema: {
        summary: 'Sandbox nodes and their load',
        tags: ['dashboard'],
        response: { 200: NodesOverview, ...errors },
      },
    },
    async () => {
      const nodes = await sources.nodes?.();
      return nodes === undefined || nodes.length === 0
        ? {
            available: false as const,
            reason: 'tools run inline in this Keel process; no sandbox node has registered',
          }
        : { available: true as const, nodes };
    },
  );
}
