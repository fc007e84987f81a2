// GET /v1/agents: the agents of this deployment, each version with its input and output schemas as
// JSON Schema (from the agents module this API process loaded) and the processes that serve it (as
// they announce themselves in the store: this process in `keel dev`, every live server and worker
// in distributed mode). It only reads.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TenantRecord } from '../../domain/records.ts';
import { agentJsonSchemas } from '../../engine/agent-contract.ts';
import type { AgentRegistry } from '../../engine/registry.ts';
import { PROCESS_SEEN_WITHIN_MS } from '../../engine/serving-announcer.ts';
import type { ServingProcess } from '../../store/serving-processes.ts';
import type { Store } from '../../store/store.ts';
import { ErrorBody } from '../schemas.ts';

const JsonSchema = z
  .record(z.string(), z.unknown())
  .nullable()
  .describe('JSON Schema (draft 2020-12) of the zod schema the agent declares; null when none');

const ServingProcessBody = z
  .object({
    workerId: z.string().describe('The process’s lease owner id'),
    role: z.string().describe('dev, server or worker'),
    host: z.string(),
    pid: z.number().int(),
    since: z.string().describe('When the process started'),
    lastSeenAt: z.string().describe('Its last announcement (every 10 s while it lives)'),
  })
  .meta({ id: 'ServingProcess' });

const AgentVersionBody = z
  .object({
    version: z.string(),
    latest: z
      .boolean()
      .describe('The version a run naming the agent without a version is pinned to here'),
    loadedHere: z
      .boolean()
      .describe('This API process loaded it (its schemas are known and its input is checked)'),
    input: JsonSchema,
    output: JsonSchema,
    servedBy: z
      .array(ServingProcessBody)
      .describe('Processes that claim runs of this version (seen in the last 30 s)'),
  })
  .meta({ id: 'AgentVersion' });

const AgentListBody = z
  .object({
    agents: z.array(
      z.object({ name: z.string(), versions: z.array(AgentVersionBody) }).meta({ id: 'Agent' }),
    ),
  })
  .meta({ id: 'AgentList' });

export interface AgentRoutesDeps {
  store: Store;
  registry: AgentRegistry;
  tenantOf(request: unknown): TenantRecord;
}

export function registerAgentRoutes(app: FastifyInstance, deps: AgentRoutesDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/v1/agents',
    {
      schema: {
        summary:
          'The agents and their versions: input and output schemas (JSON Schema) and the processes serving each',
        tags: ['agents'],
        response: { 200: AgentListBody, 401: ErrorBody },
      },
    },
    async (request) => {
      deps.tenantOf(request);
      const processes = await deps.store.listServingProcesses(Date.now() - PROCESS_SEEN_WITHIN_MS);
      return { agents: listAgents(deps.registry, processes) };
    },
  );
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Versions loaded here and versions some process serves, by name then version. */
function listAgents(registry: AgentRegistry, processes: ServingProcess[]) {
  const keys = new Set<string>(registry.served());
  for (const p of processes) for (const key of p.served) keys.add(key);
  const byName = new Map<string, string[]>();
  for (const key of keys) {
    const at = key.lastIndexOf('@');
    const name = key.slice(0, at);
    byName.set(name, [...(byName.get(name) ?? []), key.slice(at + 1)]);
  }
  return [...byName.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, versions]) => {
      const latest = registry.list().findLast((a) => a.name === name)?.version;
      return {
        name,
        versions: versions
          .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
          .map((version) => {
            const agent = registry.get(name, version);
            const key = `${name}@${version}`;
            return {
              version,
              latest: version === latest,
              loadedHere: agent !== undefined,
              ...(agent === undefined ? { input: null, output: null } : agentJsonSchemas(agent)),
              servedBy: processes
                .filter((p) => p.served.includes(key))
                .map((p) => ({
                  workerId: p.workerId,
                  role: p.role,
                  host: p.host,
                  pid: p.pid,
                  since: iso(p.startedAt),
                  lastSeenAt: iso(p.lastSeenAt),
                })),
            };
          }),
      };
    });
}
