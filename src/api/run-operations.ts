// What the run routes do, without HTTP: submit, read, list, answer, cancel, resolve, copy and read
// the journal of a tenant's runs. The Fastify routes (routes/runs.ts, run-lineage.ts, run-steps.ts,
// attempts.ts, events.ts) and the embedded runtime's handle (src/embedded/embedded-runs.ts) call
// these, so the two transports cannot drift apart. Inputs are the API's parsed bodies; answers are
// the API's views (redacted by the tenant's policy). Another tenant's run is a 404 run_not_found.
import { createHash } from 'node:crypto';
import type { DelegatedChildPolicy } from '../domain/delegation.ts';
import type { EgressDestination } from '../domain/egress-scope.ts';
import stringify from 'safe-stable-stringify';
import type { z } from 'zod';
import { newRunId } from '../domain/ids.ts';
import type { Json } from '../domain/json.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import type { NewRun, RunRecord, TenantRecord } from '../domain/records.ts';
import { isTerminal } from '../domain/run-status.ts';
import { parseAgentInput } from '../engine/agent-contract.ts';
import { admitBySpend, type SpendAdmissionPort } from './spend-admission.ts';
import type { AgentRegistry } from '../engine/registry.ts';
import type { AgentDefinition } from '../sdk/types.ts';
import type { Store } from '../store/store.ts';
import { telemetry } from '../telemetry/telemetry.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { admitByDeadline } from './deadline-admission.ts';
import type { EventHub } from './event-hub.ts';
import { redactEventView, redactRunView } from './redaction.ts';
import type { CreateRunBody, ListRunsQuery, ResolveBody } from './schemas.ts';
import { STEP_IO_PREVIEW_MAX_BYTES, stepIoFields } from './step-io.ts';
import { TERMINAL_EVENT_TYPES, attemptView, eventView, runView, stepView } from './views.ts';
import { explainQueued, tenantAtCap } from './waiting-view.ts';
import { pendingApprovalsOf } from './routes/approvals.ts';

export interface RunOperationsDeps {
  store: Store;
  registry: AgentRegistry;
  /** Spend admission (spend-admission.ts); absent: runs are not checked against budgets here. */
  spend?: SpendAdmissionPort | undefined;
}

/** The run, if it is the tenant's; otherwise 404 run_not_found (another tenant's looks missing). */
export async function ownedRun(store: Store, tenant: TenantRecord, id: string): Promise<RunRecord> {
  const run = await store.getRun(id);
  if (run === null || run.tenantId !== tenant.id)
    throw new KeelError('run_not_found', `run ${id} not found`);
  return run;
}

/** A run as its tenant may see it: input and result under the tenant's redaction policy. */
export function shownRun(run: RunRecord, tenant: TenantRecord) {
  return redactRunView(runView(run), tenant.redact);
}

/** A queued run says why it waits (waiting-view.ts) instead of sitting queued unexplained. */
function explained(registry: AgentRegistry, run: RunRecord, atCap: boolean, tenant: TenantRecord) {
  return explainQueued(
    shownRun(run, tenant),
    run,
    registry.get(run.agent, run.agentVersion) !== undefined,
    atCap,
  );
}

/**
 * Stores a new run (or finds the one stored earlier under the same idempotency key): 400
 * agent_input_invalid, 404 agent_not_found, 409 idempotency_conflict, 429 tenant_queue_full or
 * deadline_unmeetable before any run exists.
 */
export async function submitRun(
  deps: RunOperationsDeps,
  tenant: TenantRecord,
  body: z.infer<typeof CreateRunBody>,
  /** The run that starts this one (a delegated token's run); null: a top-level run. */
  parentRunId: string | null = null,
): Promise<{ run: RunRecord; created: boolean }> {
  const newRun = await preparedRun(deps, tenant, body, parentRunId);
  return deps.store.createRun(newRun).catch((error: unknown) => {
    countRejected(tenant, error);
    throw error;
  });
}

/** A full tenant queue is counted as a rejected admission (the other refusals count themselves). */
export function countRejected(tenant: TenantRecord, error: unknown): void {
  if (isKeelError(error) && error.code === 'tenant_queue_full')
    telemetry.runAdmissionRejected(tenant.id, 'api', error.code);
}

/**
 * The run a submission would store, checked as far as it can be without the store's transaction:
 * 400 agent_input_invalid, 404 agent_not_found, 429 deadline_unmeetable.
 */
export async function preparedRun(
  { store, registry, spend }: RunOperationsDeps,
  tenant: TenantRecord,
  body: z.infer<typeof CreateRunBody>,
  parentRunId: string | null,
): Promise<NewRun> {
  const onParentEnd = delegatedChildPolicy(body.onParentEnd, parentRunId);
  const agent = registry.resolve(body.agent);
  const input = (body.input ?? null) as Json;
  parseAgentInput(agent, input); // 400 agent_input_invalid before any run exists
  // 429 deadline_unmeetable before any run exists, when asked to refuse a run expected late.
  const admitted = await admitByDeadline(store, agent.name, body, Date.now()).catch(
    (error: unknown) => {
      if (isKeelError(error)) telemetry.runAdmissionRejected(tenant.id, 'api', error.code);
      throw error;
    },
  );
  // 429 budget_insufficient before any run exists, or a run created parked, when the agent's
  // estimated spend exceeds what the tenant has left today.
  const parkOnBudget = await admitBySpend(spend, store, tenant.id, agent, Date.now()).catch(
    (error: unknown) => {
      if (isKeelError(error)) telemetry.runAdmissionRejected(tenant.id, 'api', error.code);
      throw error;
    },
  );
  // A delegated token's child is narrowed by its parent's list too: a tool cannot reach, through a
  // child it starts, a destination its own run may not.
  const parentAllow =
    parentRunId === null ? null : ((await store.getRun(parentRunId))?.egressAllow ?? null);
  const egressAllow = narrowedEgress(body.egressAllow ?? null, parentAllow);
  const requestHash =
    body.idempotencyKey === undefined
      ? null
      : hashRequest({
          agent: body.agent,
          input,
          priority: body.priority ?? null,
          budget: body.budget ?? null,
          metadata: body.metadata ?? null,
          // A delegated token's child: the same key from another parent is another request.
          ...(parentRunId !== null ? { parentRunId } : {}),
          // Only when given: a request without it hashes as it did before the field existed.
          ...(body.egressAllow === undefined ? {} : { egressAllow: body.egressAllow }),
          ...(body.onParentEnd === undefined ? {} : { onParentEnd: body.onParentEnd }),
        });
  return {
    id: newRunId(),
    tenantId: tenant.id,
    agent: agent.name,
    agentVersion: agent.version,
    input,
    priority: admitted.priority,
    expectedFinishAt: admitted.expectedFinishAt,
    budget: body.budget ?? {},
    metadata: (body.metadata ?? null) as Record<string, Json> | null,
    egressAllow,
    parentRunId,
    ...(onParentEnd === undefined ? {} : { onParentEnd }),
    idempotencyKey: body.idempotencyKey ?? null,
    requestHash,
    ...(parkOnBudget === undefined ? {} : { parkOnBudget }),
  };
}

/**
 * What a delegated child does when its parent ends (default cancel, as a ctx.child child); undefined
 * for a top-level run. 400 on_parent_end_refused for `wait`, or for a policy without a parent.
 */
function delegatedChildPolicy(
  asked: 'cancel' | 'detach' | 'wait' | undefined,
  parentRunId: string | null,
): DelegatedChildPolicy | undefined {
  if (parentRunId === null) {
    if (asked === undefined) return undefined;
    throw new KeelError(
      'on_parent_end_refused',
      'onParentEnd is only for a child run started with a delegated token: this run has no parent',
    );
  }
  if (asked === 'wait')
    throw new KeelError(
      'on_parent_end_refused',
      "onParentEnd 'wait' is ctx.child's alone: the parent's replayed code cannot wait for a child its tool started; use 'cancel' or 'detach'",
    );
  return asked ?? 'cancel';
}

/** `own` cut down to what `parent` allows (destinations in both); null narrows nothing. */
function narrowedEgress(
  own: EgressDestination[] | null,
  parent: readonly EgressDestination[] | null,
): EgressDestination[] | null {
  if (parent === null) return own;
  if (own === null) return [...parent];
  return own.filter((d) => parent.some((p) => p.host === d.host && p.port === d.port));
}

function hashRequest(fields: Record<string, unknown>): string {
  return createHash('sha256')
    .update(stringify(fields) ?? '')
    .digest('hex');
}

/** One run as GET /v1/runs/:id shows it: why it is queued, and its pending approvals. */
export async function readRun(deps: RunOperationsDeps, tenant: TenantRecord, id: string) {
  const run = await ownedRun(deps.store, tenant, id);
  // A queued run of a tenant at its concurrency cap is not claimed until one of its runs ends:
  // say so.
  const shown = explained(deps.registry, run, await tenantAtCap(deps.store, tenant, [run]), tenant);
  if (run.waitingReason !== 'approval') return shown;
  return {
    ...shown,
    pendingApprovals: await pendingApprovalsOf(deps.store, tenant.id, run.id, tenant.redact),
  };
}

/** One page of the tenant's runs, newest first, with the cursor of the next page (or null). */
export async function listRunsPage(
  deps: RunOperationsDeps,
  tenant: TenantRecord,
  q: z.infer<typeof ListRunsQuery>,
) {
  const afterId = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  const runs = await deps.store.listRuns(tenant.id, {
    limit: q.limit + 1,
    ...(q.status ? { status: q.status } : {}),
    ...(q.agent ? { agent: q.agent } : {}),
    ...(q.code ? { errorCode: q.code } : {}),
    ...(afterId ? { afterId } : {}),
    ...(q.rerunOf ? { rerunOf: q.rerunOf } : {}),
  });
  const page = runs.slice(0, q.limit);
  const atCap = await tenantAtCap(deps.store, tenant, page);
  return {
    runs: page.map((run) => explained(deps.registry, run, atCap, tenant)),
    nextCursor: runs.length > q.limit ? encodeCursor(page[page.length - 1]!.id) : null,
  };
}

/** `graceMs`: the requester's grace for tool calls in flight (validated by the caller's schema). */
export async function cancelRun(
  store: Store,
  tenant: TenantRecord,
  id: string,
  options: { graceMs?: number | undefined } = {},
) {
  await ownedRun(store, tenant, id);
  return shownRun(await store.requestCancel(id, options.graceMs ?? null), tenant);
}

export async function readmitRun(store: Store, tenant: TenantRecord, id: string) {
  await ownedRun(store, tenant, id);
  return shownRun(await store.readmitRun(id), tenant);
}

export async function answerInput(
  store: Store,
  tenant: TenantRecord,
  id: string,
  key: string,
  value: Json,
) {
  await ownedRun(store, tenant, id);
  return shownRun(await store.provideInput(id, key, value), tenant);
}

/** Delivers a message to the run's `ctx.receive(channel)`; a repeated id is answered as a duplicate. */
export async function deliverMessage(
  store: Store,
  tenant: TenantRecord,
  id: string,
  message: Parameters<Store['postMessage']>[1],
) {
  await ownedRun(store, tenant, id);
  return store.postMessage(id, message);
}

export async function resolveExecution(
  store: Store,
  tenant: TenantRecord,
  id: string,
  executionId: string,
  body: z.infer<typeof ResolveBody>,
) {
  await ownedRun(store, tenant, id);
  const { action, result, error } = body;
  const resolution =
    action === 'retry'
      ? { action }
      : action === 'succeeded'
        ? { action, result: (result ?? null) as Json }
        : {
            action,
            error: {
              code: 'tool_failed',
              message: error?.message ?? 'marked failed by an operator',
            },
          };
  return shownRun(await store.resolveExecution(id, executionId, resolution), tenant);
}

/** The journal as a timeline; with `io`, inputs and outputs redacted, previews past `maxBytes`. */
export async function journalSteps(
  store: Store,
  tenant: TenantRecord,
  id: string,
  io: boolean,
  maxBytes: number = STEP_IO_PREVIEW_MAX_BYTES,
) {
  await ownedRun(store, tenant, id);
  const journal = await store.loadJournal(id);
  if (!io) return journal.map(stepView);
  const options = { policy: tenant.redact, maxBytes };
  return journal.map((entry) => ({ ...stepView(entry), ...stepIoFields(entry, options) }));
}

/** One step with its whole input and output; 404 step_not_found for a position not journaled. */
export async function journalStep(store: Store, tenant: TenantRecord, id: string, seq: number) {
  await ownedRun(store, tenant, id);
  const entry = (await store.loadJournal(id)).find((e) => e.seq === seq);
  if (entry === undefined)
    throw new KeelError('step_not_found', `run ${id} has no step at position ${seq}`, {
      details: { runId: id, seq },
    });
  return {
    ...stepView(entry),
    ...stepIoFields(entry, { policy: tenant.redact, maxBytes: undefined }),
  };
}

export async function runAttempts(store: Store, tenant: TenantRecord, id: string) {
  await ownedRun(store, tenant, id);
  return (await store.listAttempts(id)).map(attemptView);
}

/** The events stored after `after`, at most `limit`, redacted. */
export async function storedEvents(
  store: Store,
  tenant: TenantRecord,
  id: string,
  after: number,
  limit: number,
) {
  await ownedRun(store, tenant, id);
  const events = await store.listEvents(id, after, limit);
  return events.map((event) => redactEventView(eventView(event), tenant.redact));
}

/** How many events one read of a followed run takes at most. */
export const FOLLOW_PAGE_MAX_EVENTS = 500;

/**
 * A run's events after `after`, as they are stored, ending after its terminal event (or when the
 * run is gone, or `signal` aborts). Woken by the event hub, never by polling the store. The run
 * must have been checked to be the caller's.
 */
export async function* followEvents(
  store: Store,
  hub: EventHub,
  runId: string,
  after: number,
  signal: AbortSignal,
) {
  let cursor = after;
  let wake: (() => void) | undefined;
  let changed = true;
  const unsubscribe = hub.subscribe(runId, () => {
    changed = true;
    wake?.();
  });
  const onAbort = (): void => wake?.();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    while (!signal.aborted) {
      if (!changed) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (signal.aborted) break;
      changed = false;
      const events = await store.listEvents(runId, cursor, FOLLOW_PAGE_MAX_EVENTS);
      let ended = false;
      for (const event of events) {
        yield event;
        cursor = event.seq;
        if (TERMINAL_EVENT_TYPES.has(event.type)) ended = true;
      }
      if (events.length === FOLLOW_PAGE_MAX_EVENTS) changed = true;
      if (!ended && events.length === 0) {
        const run = await store.getRun(runId);
        ended = run === null || isTerminal(run.status);
      }
      if (ended) break;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}

/** What a rerun, reset or fork asks for, once parsed. */
export interface CopyAsk {
  op: 'rerun' | 'reset' | 'fork';
  position: number | undefined;
  input: Json | undefined;
  agentVersion: string | undefined;
  idempotencyKey: string | undefined;
}

/**
 * The version a new run of `source` runs: the one asked for (404 agent_not_found if this process
 * does not serve it), else the source's own if served, else the newest served.
 */
export function versionFor(
  registry: AgentRegistry,
  source: RunRecord,
  asked: string | undefined,
): AgentDefinition {
  if (asked !== undefined) return registry.resolve(`${source.agent}@${asked}`);
  return registry.get(source.agent, source.agentVersion) ?? registry.resolve(source.agent);
}

/** A new run made from one of the tenant's runs: a rerun, a reset or a fork. */
export async function copyRun(
  { store, registry }: RunOperationsDeps,
  tenant: TenantRecord,
  sourceId: string,
  ask: CopyAsk,
): Promise<{ run: RunRecord; created: boolean }> {
  const source = await ownedRun(store, tenant, sourceId);
  // A reset or fork reuses the journal before its position; an archived run's live journal is gone,
  // so the copy would run those effects again.
  if (ask.op !== 'rerun' && source.archive !== undefined)
    throw new KeelError(
      'run_archived',
      `run ${source.id}'s history was archived by retention; rerun it from its input instead`,
    );
  const agent = versionFor(registry, source, ask.agentVersion);
  const input = ask.input === undefined ? source.input : ask.input;
  const requestHash =
    ask.idempotencyKey === undefined
      ? null
      : hashRequest({
          op: ask.op,
          source: source.id,
          position: ask.position ?? null,
          input: ask.input ?? null,
          agentVersion: ask.agentVersion ?? null,
        });
  return store
    .copyRun({
      run: {
        id: newRunId(),
        tenantId: tenant.id,
        agent: agent.name,
        agentVersion: agent.version,
        input,
        priority: source.priority,
        budget: source.budget,
        metadata: source.metadata,
        // A copy reaches no further than its source could.
        egressAllow: source.egressAllow,
        parentRunId: null,
        idempotencyKey: ask.idempotencyKey ?? null,
        requestHash,
      },
      sourceRunId: source.id,
      mode: ask.position === undefined ? 'rerun' : 'reset',
      ...(ask.position === undefined ? {} : { position: ask.position }),
    })
    .catch((error: unknown) => {
      // Admitted like any new run: a full tenant queue refuses it (429), counted as POST /v1/runs counts it.
      if (isKeelError(error) && error.code === 'tenant_queue_full')
        telemetry.runAdmissionRejected(tenant.id, 'api', error.code);
      throw error;
    });
}
