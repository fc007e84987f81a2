// Wire schemas (zod) of the dashboard's read-only JSON endpoints under /v1/dashboard; the OpenAPI
// document shows them. Anything a source cannot provide is `available: false` with a reason, so a
// page can say so instead of guessing.
import { z } from 'zod';

export const AgentUsage = z.object({
  agent: z.string(),
  runs: z.number().int(),
  byStatus: z.record(z.string(), z.number().int()),
  steps: z.number(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number().describe('All spend of the runs, failed and cancelled ones included'),
  succeeded: z.number().int(),
  costPerSuccessUsd: z
    .number()
    .nullable()
    .describe('costUsd ÷ succeeded; null before the first success'),
});

export const TenantOverview = z
  .object({
    tenant: z.object({ id: z.string(), name: z.string() }),
    agents: z
      .array(z.object({ name: z.string(), version: z.string() }))
      .describe('Agents this server serves'),
    totals: AgentUsage.omit({ agent: true }),
    usage: z.array(AgentUsage),
    quotas: z.discriminatedUnion('available', [
      z.object({
        available: z.literal(true),
        maxConcurrentRuns: z.number().nullable(),
        requestsPerMinute: z.number().nullable(),
        tokensPerMinute: z.number().nullable(),
        weight: z.number().nullable(),
      }),
      z.object({ available: z.literal(false), reason: z.string() }),
    ]),
  })
  .meta({ id: 'DashboardTenant' });

export const QueueRow = z.object({
  agent: z.string(),
  queued: z.number().int(),
  running: z.number().int(),
  waiting: z.number().int(),
  cancelling: z.number().int(),
  oldestQueuedAgeMs: z.number().nullable(),
  oldestWaitingAgeMs: z.number().nullable(),
});

export const PoolsQuery = z.strictObject({
  minutes: z.coerce
    .number()
    .int()
    .min(5)
    .max(24 * 60)
    .default(60),
});

export const PoolsOverview = z
  .object({
    at: z.string(),
    runQueues: z
      .array(QueueRow)
      .describe('The tenant’s runs per agent, from the store: the queue every process claims from'),
    throughput: z.object({
      bucketMs: z.number().int(),
      since: z.string(),
      buckets: z.array(
        z.object({
          start: z.string(),
          succeeded: z.number().int(),
          failed: z.number().int(),
          cancelled: z.number().int(),
        }),
      ),
    }),
    pools: z.discriminatedUnion('available', [
      z.object({
        available: z.literal(true),
        pools: z.array(
          z.object({
            name: z.string(),
            kind: z.string(),
            queued: z.number(),
            running: z.number(),
            concurrency: z.number().nullable(),
            oldestQueuedAgeMs: z.number().nullable(),
            state: z.string().optional(),
          }),
        ),
      }),
      z.object({ available: z.literal(false), reason: z.string() }),
    ]),
  })
  .meta({ id: 'DashboardPools' });

export const NodesOverview = z
  .discriminatedUnion('available', [
    z.object({
      available: z.literal(true),
      nodes: z.array(
        z.object({
          id: z.string(),
          isolation: z.string(),
          state: z.string(),
          slotsUsed: z.number(),
          slotsTotal: z.number(),
          memoryUsedBytes: z.number().nullable(),
          memoryTotalBytes: z.number().nullable(),
          lastSeenAt: z.string(),
        }),
      ),
    }),
    z.object({ available: z.literal(false), reason: z.string() }),
  ])
  .meta({ id: 'DashboardNodes' });

export const TenantsOverview = z
  .object({
    tenants: z.array(
      AgentUsage.omit({ agent: true }).extend({
        id: z.string(),
        name: z.string(),
        createdAt: z.string(),
        oldestQueuedAgeMs: z
          .number()
          .nullable()
          .describe('Age of the tenant’s longest-waiting claimable run'),
        quotas: TenantOverview.shape.quotas,
      }),
    ),
  })
  .meta({ id: 'DashboardTenants' });
