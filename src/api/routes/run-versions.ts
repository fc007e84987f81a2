// POST /v1/runs/migrate-version: moves the caller's queued runs of agent@from that never started to
// agent@to, which this process must serve. A run that started stays on the code that started it
// (its journal was written by that code); the report says how many moved and which were left.
// Scoped by the caller's tenant like every /v1/runs route.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { TenantRecord } from '../../domain/records.ts';
import type { AgentRegistry } from '../../engine/registry.ts';
import type { Store } from '../../store/store.ts';
import { ErrorBody } from '../schemas.ts';
import { MigrateVersionBody, MigrateVersionReport } from '../version-schemas.ts';

/** Runs moved per store transaction: a large backlog moves in several, none holding the store long. */
export const MIGRATE_BATCH_RUNS = 500;
/** Run ids the report names; it counts every moved run. */
export const MIGRATE_REPORT_IDS_MAX = 1_000;

export interface RunVersionRoutesDeps {
  store: Store;
  registry: AgentRegistry;
  tenantOf(request: unknown): TenantRecord;
}

export function registerRunVersionRoutes(app: FastifyInstance, deps: RunVersionRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v1/runs/migrate-version',
    {
      schema: {
        summary:
          'Move queued runs that never started from one version of an agent to another that is served (audited)',
        tags: ['runs'],
        body: MigrateVersionBody,
        response: {
          200: MigrateVersionReport,
          400: ErrorBody,
          401: ErrorBody,
          409: ErrorBody,
        },
      },
    },
    async (request) => {
      const tenant = deps.tenantOf(request);
      const { agent, from, to } = request.body;
      if (from === to)
        throw new KeelError('validation_failed', `from and to are both version ${from}`);
      if (deps.registry.get(agent, to) === undefined)
        throw new KeelError(
          'agent_version_not_served',
          `no process here serves ${agent}@${to}: start one whose agents module exports it, then migrate`,
          { details: { agent, version: to, served: deps.registry.served() } },
        );
      const moved: string[] = [];
      let count = 0;
      let last: Awaited<ReturnType<Store['migrateRunVersion']>>;
      do {
        last = await deps.store.migrateRunVersion({
          tenantId: tenant.id,
          agent,
          fromVersion: from,
          toVersion: to,
          limit: MIGRATE_BATCH_RUNS,
          actor: `tenant:${tenant.name}`,
        });
        count += last.moved.length;
        moved.push(...last.moved.slice(0, MIGRATE_REPORT_IDS_MAX - moved.length));
      } while (last.more);
      request.log.info(
        { agent, from, to, moved: count, started: last.startedTotal },
        'queued runs moved to another agent version',
      );
      return {
        agent,
        from,
        to,
        moved: count,
        movedRunIds: moved,
        started: last.startedTotal,
        startedRunIds: last.started,
      };
    },
  );
}
