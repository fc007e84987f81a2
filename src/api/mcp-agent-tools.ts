// Keel's agents as MCP tools (the server side of /v1/mcp): one tool per agent (its latest version
// here), its input schema from the agent's zod contract; `keel_get_run` to poll a run that outlived
// the wait. A call starts a run for the caller's tenant, follows it through the store's change feed
// and sends the run's events as MCP progress notifications, then answers with the result — or,
// past the wait limit, with the run id to poll. It holds nothing between requests.
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { isKeelError } from '../domain/keel-error.ts';
import type { Json } from '../domain/json.ts';
import type { RunRecord, TenantRecord } from '../domain/records.ts';
import { isTerminal } from '../domain/run-status.ts';
import { newRunId } from '../domain/ids.ts';
import { agentJsonSchemas, parseAgentInput } from '../engine/agent-contract.ts';
import type { AgentRegistry } from '../engine/registry.ts';
import type { AgentDefinition } from '../sdk/types.ts';
import type { Store } from '../store/store.ts';
import { admitByDeadline } from './deadline-admission.ts';
import type { EventHub } from './event-hub.ts';
import { redactRunView } from './redaction.ts';
import { runView } from './views.ts';

/** The polling tool's name (no agent of this name is exposed). */
export const GET_RUN_TOOL = 'keel_get_run';
/** How long a call waits for its run before answering with the run id, in ms. */
export const MCP_RUN_WAIT_MS_DEFAULT = 30_000;
/** The most a caller may ask to wait (`_meta["io.keel/waitMs"]` or keel_get_run's waitMs). */
export const MCP_RUN_WAIT_MS_MAX = 300_000;
/** Events read per page while following a run. */
const EVENTS_PAGE = 200;
export const WAIT_META_KEY = 'io.keel/waitMs';

export interface AgentToolsDeps {
  store: Store;
  registry: AgentRegistry;
  hub: EventHub;
}

/** How an agent's run input travels in the tool's arguments. */
function inputSchemaOf(agent: AgentDefinition): { schema: Tool['inputSchema']; wrapped: boolean } {
  const input = agentJsonSchemas(agent).input;
  if (input !== null && input.type === 'object')
    return { schema: input as Tool['inputSchema'], wrapped: false };
  // Not an object (or no contract): the input goes in an `input` argument.
  return {
    schema: {
      type: 'object',
      properties: { input: input ?? { description: 'The run’s input (any JSON)' } },
      ...(input === null ? {} : { required: ['input'] }),
    },
    wrapped: true,
  };
}

export function listAgentTools(registry: AgentRegistry): Tool[] {
  const latest = new Map<string, AgentDefinition>();
  for (const agent of registry.list()) latest.set(agent.name, agent); // registration order: latest last
  const tools: Tool[] = [...latest.values()]
    .filter((agent) => agent.name !== GET_RUN_TOOL)
    .map((agent) => ({
      name: agent.name,
      description: `Runs Keel agent ${agent.name}@${agent.version} and returns its result (a run that takes longer than the wait returns its id: poll it with ${GET_RUN_TOOL}).`,
      inputSchema: inputSchemaOf(agent).schema,
    }));
  tools.push({
    name: GET_RUN_TOOL,
    description:
      'A Keel run’s status, and its result or error once it has ended; waits up to waitMs for it to end.',
    inputSchema: {
      type: 'object',
      properties: {
        runId: { type: 'string' },
        waitMs: { type: 'integer', minimum: 0, maximum: MCP_RUN_WAIT_MS_MAX },
      },
      required: ['runId'],
    },
    annotations: { readOnlyHint: true },
  });
  return tools;
}

export interface CallContext {
  tenant: TenantRecord;
  waitMs: number;
  signal: AbortSignal;
  /** Sends one progress notification (only when the caller asked for progress). */
  progress?: ((progress: number, message: string) => Promise<void>) | undefined;
}

export async function callAgentTool(
  deps: AgentToolsDeps,
  name: string,
  args: Record<string, unknown>,
  call: CallContext,
): Promise<CallToolResult> {
  if (name === GET_RUN_TOOL) {
    const runId = typeof args.runId === 'string' ? args.runId : '';
    const run = await deps.store.getRun(runId);
    if (run === null || run.tenantId !== call.tenant.id)
      return failure('run_not_found', `run ${runId} not found`);
    const waitMs =
      typeof args.waitMs === 'number' ? Math.min(Math.max(0, args.waitMs), MCP_RUN_WAIT_MS_MAX) : 0;
    return answer(await follow(deps, run, { ...call, waitMs }), call.tenant);
  }
  let agent: AgentDefinition;
  try {
    agent = deps.registry.resolve(name);
    const input = (inputSchemaOf(agent).wrapped ? (args.input ?? null) : args) as Json;
    parseAgentInput(agent, input);
    const admitted = await admitByDeadline(deps.store, agent.name, {}, Date.now());
    const { run } = await deps.store.createRun({
      id: newRunId(),
      tenantId: call.tenant.id,
      agent: agent.name,
      agentVersion: agent.version,
      input,
      priority: admitted.priority,
      expectedFinishAt: admitted.expectedFinishAt,
      budget: {},
      metadata: { via: 'mcp' },
      parentRunId: null,
      idempotencyKey: null,
      requestHash: null,
    });
    return answer(await follow(deps, run, call), call.tenant);
  } catch (error) {
    if (isKeelError(error)) return failure(error.code, error.message);
    throw error;
  }
}

/**
 * Follows a run until it ends or `waitMs` passes, sending each new event as a progress
 * notification; wakes on the store's change feed, not a poll loop.
 */
async function follow(deps: AgentToolsDeps, run: RunRecord, call: CallContext): Promise<RunRecord> {
  const deadline = Date.now() + call.waitMs;
  let afterSeq = 0;
  let sent = 0;
  let current = run;
  for (;;) {
    let woke: () => void = () => undefined;
    const changed = new Promise<void>((resolve) => (woke = resolve));
    const unsubscribe = deps.hub.subscribe(run.id, () => woke());
    try {
      if (call.progress !== undefined) {
        for (;;) {
          const events = await deps.store.listEvents(run.id, afterSeq, EVENTS_PAGE);
          for (const event of events) {
            afterSeq = event.seq;
            await call.progress(++sent, event.type);
          }
          if (events.length < EVENTS_PAGE) break;
        }
      }
      current = (await deps.store.getRun(run.id)) ?? current;
      const left = deadline - Date.now();
      if (isTerminal(current.status) || left <= 0 || call.signal.aborted) return current;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        changed,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, left))),
        new Promise<void>((resolve) =>
          call.signal.addEventListener('abort', () => resolve(), { once: true }),
        ),
      ]);
      clearTimeout(timer);
    } finally {
      unsubscribe();
    }
  }
}

function answer(run: RunRecord, tenant: TenantRecord): CallToolResult {
  const view = redactRunView(runView(run), tenant.redact) as Record<string, unknown>;
  const structured = {
    runId: run.id,
    status: run.status,
    ...(run.status === 'succeeded' ? { result: view.result } : {}),
    ...(run.error === null ? {} : { error: view.error }),
  };
  const text = isTerminal(run.status)
    ? JSON.stringify(run.status === 'succeeded' ? view.result : view.error)
    : `Run ${run.id} is ${run.status}; call ${GET_RUN_TOOL} with this runId for its result.`;
  return {
    content: [{ type: 'text', text }],
    structuredContent: structured,
    ...(run.status === 'failed' || run.status === 'cancelled' ? { isError: true } : {}),
  };
}

function failure(code: string, message: string): CallToolResult {
  return {
    content: [{ type: 'text', text: `${code}: ${message}` }],
    structuredContent: { error: { code, message } },
    isError: true,
  };
}

/** The wait a caller asked for in the request's _meta, bounded; else the default. */
export function waitMsOf(meta: Record<string, unknown> | undefined): number {
  const asked = meta?.[WAIT_META_KEY];
  if (typeof asked !== 'number' || !Number.isFinite(asked)) return MCP_RUN_WAIT_MS_DEFAULT;
  return Math.min(Math.max(0, Math.floor(asked)), MCP_RUN_WAIT_MS_MAX);
}
