// The placer: sends a sandboxed call to a sandbox node over HTTP. Its view of the nodes is read from
// the store every refresh interval (the load each node last heartbeated, state `ready`, heartbeat
// fresh), and the placements it made since count as load (placement.ts: power-of-k). The node
// admits or refuses by its real capacity: a refusal, or a node that cannot be reached at all, moves
// the call to the next candidate; when every candidate refuses, the call waits and retries until its
// placement deadline, then fails `nodes_unavailable` (retryable). A node lost mid-call (the
// connection dies after the call was sent): a read or idempotent call is placed again elsewhere
// with the same execution id; a side effect throws `node_lost`, which the engine turns into an
// unknown outcome. Keeps no durable state.
import { setTimeout as sleep } from 'node:timers/promises';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import type { SandboxNodeRecord } from '../domain/sandbox-nodes.ts';
import type { RemoteCallEffect, RemoteSandboxes } from '../sandbox/remote-sandboxes.ts';
import type { SandboxCallOutcome, SandboxCallRequest } from '../sandbox/sandbox-call.ts';
import {
  NODE_CALL_PATH,
  NODE_SIGNATURE_HEADER,
  NODE_TIME_HEADER,
  type NodeCall,
  type NodeCallResult,
  signNodeCall,
} from './node-call.ts';
import { PlacementView, type NodeLoad } from './placement.ts';

export interface SandboxPlacerOptions {
  /** The nodes as the store holds them (Store.listNodes). */
  listNodes(): Promise<SandboxNodeRecord[]>;
  /** Power-of-k's k (KEEL_PLACEMENT_K). */
  k: number;
  /** How often the view is read again, in ms (KEEL_PLACEMENT_REFRESH_MS). */
  refreshMs: number;
  /** A node whose last heartbeat is older than this is left out, in ms (KEEL_NODE_STALE_MS). */
  staleAfterMs: number;
  /** How long a call waits for a node to accept it, in ms (KEEL_PLACEMENT_DEADLINE_MS). */
  placementDeadlineMs: number;
  random?: () => number;
  now?: () => number;
}

/** Pause between two rounds in which every candidate refused, in ms. */
const ALL_REFUSED_PAUSE_MS = 250;
/** A node lost mid-call under a re-runnable call: at most this many placements per call. */
const LOST_NODE_PLACEMENTS_MAX = 3;

type Attempt =
  | { kind: 'done'; outcome: SandboxCallOutcome }
  | { kind: 'refused' }
  | { kind: 'lost'; error: unknown };

interface Endpoint {
  url: string;
  tokenHash: string;
}

export class SandboxPlacer implements RemoteSandboxes {
  readonly #options: SandboxPlacerOptions;
  readonly #view = new PlacementView();
  readonly #endpoints = new Map<string, Endpoint>();
  #refreshedAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | undefined;

  constructor(options: SandboxPlacerOptions) {
    this.#options = options;
  }

  get #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  /** Nodes the placer would consider now (ids), for tests and the operator's view. */
  async candidates(): Promise<readonly NodeLoad[]> {
    await this.#fresh(true);
    return this.#view.nodes;
  }

  async call(
    request: Omit<SandboxCallRequest, 'onOutput' | 'stopRequested'>,
    effect: RemoteCallEffect,
  ): Promise<SandboxCallOutcome> {
    const body: NodeCall = {
      tenantId: request.tenantId,
      runId: request.runId,
      executionId: request.executionId,
      profile: request.profile as unknown as Record<string, unknown>,
      argv: request.argv,
      ...(request.stdin === undefined ? {} : { stdin: request.stdin }),
      ...(request.env === undefined ? {} : { env: request.env }),
      ...(request.deadlineMs === undefined ? {} : { deadlineMs: request.deadlineMs }),
      snapshot: request.snapshot,
      secrets: request.secrets,
    };
    const text = JSON.stringify(body);
    const lost = new Set<string>();
    for (let placement = 1; ; placement++) {
      const outcome = await this.#place(text, lost, request.signal);
      if (outcome.kind === 'done') return outcome.outcome;
      // The node died with the call on it: never re-run a side effect blindly.
      if (effect === 'side-effect' || placement >= LOST_NODE_PLACEMENTS_MAX)
        throw new KeelError(
          'node_lost',
          `the sandbox node running execution ${request.executionId} stopped answering mid-call`,
          { retryable: effect !== 'side-effect', cause: outcome.error },
        );
    }
  }

  /** Tries candidates until one accepts; waits and retries while all refuse, up to the deadline. */
  async #place(
    body: string,
    lost: Set<string>,
    signal: AbortSignal | undefined,
  ): Promise<Exclude<Attempt, { kind: 'refused' }> & { nodeId?: string }> {
    const deadline = this.#now + this.#options.placementDeadlineMs;
    for (;;) {
      signal?.throwIfAborted();
      await this.#fresh(false);
      const refused = new Set(lost);
      for (;;) {
        const [nodeId] = this.#view.order(
          { k: this.#options.k, candidates: 1, random: this.#options.random ?? Math.random },
          refused,
        );
        if (nodeId === undefined) break;
        const endpoint = this.#endpoints.get(nodeId)!;
        // Counted as load from the moment it is sent, whatever the node answers: a burst must not
        // pile onto the node that looked emptiest.
        this.#view.placed(nodeId);
        const attempt = await this.#send(endpoint, body, signal);
        if (attempt.kind === 'refused') {
          refused.add(nodeId);
          continue;
        }
        if (attempt.kind === 'lost') lost.add(nodeId);
        return attempt;
      }
      if (this.#now >= deadline)
        throw new KeelError(
          'nodes_unavailable',
          `no sandbox node accepted the call within ${this.#options.placementDeadlineMs} ms (${this.#view.nodes.length} nodes in view)`,
          { retryable: true, retryAfterMs: ALL_REFUSED_PAUSE_MS },
        );
      await sleep(ALL_REFUSED_PAUSE_MS, undefined, signal ? { signal } : {});
      await this.#fresh(true);
    }
  }

  async #send(endpoint: Endpoint, body: string, signal: AbortSignal | undefined): Promise<Attempt> {
    const time = this.#now;
    let response: Response;
    try {
      response = await fetch(new URL(NODE_CALL_PATH, endpoint.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [NODE_TIME_HEADER]: String(time),
          [NODE_SIGNATURE_HEADER]: signNodeCall(endpoint.tokenHash, time, body),
        },
        body,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      // Nothing reached a node that refused the connection: as safe as a refusal.
      return connectionRefused(error) ? { kind: 'refused' } : { kind: 'lost', error };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw error;
      return { kind: 'lost', error };
    }
    let parsed: NodeCallResult | { error: { code: string; message: string; retryable?: boolean } };
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      // Not the node's answer (a proxy's error page, a cut body): the call may have run.
      return { kind: 'lost', error };
    }
    if (response.ok) return { kind: 'done', outcome: parsed as NodeCallResult };
    const error = (parsed as { error: { code: string; message: string; retryable?: boolean } })
      .error;
    if (error.code === 'node_refused') return { kind: 'refused' };
    throw new KeelError(error.code as never, error.message, {
      retryable: error.retryable === true,
    });
  }

  /** Reads the view again when it is older than the refresh interval (or when forced). */
  async #fresh(force: boolean): Promise<void> {
    if (!force && this.#now - this.#refreshedAt < this.#options.refreshMs) return;
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    await this.#refreshing;
  }

  async #refresh(): Promise<void> {
    const now = this.#now;
    const nodes = (await this.#options.listNodes()).filter(
      (node) =>
        node.state === 'ready' &&
        node.url !== null &&
        node.capacity !== null &&
        node.heartbeatAt !== null &&
        now - node.heartbeatAt <= this.#options.staleAfterMs,
    );
    this.#endpoints.clear();
    for (const node of nodes)
      this.#endpoints.set(node.id, { url: node.url!, tokenHash: node.tokenHash });
    this.#view.refresh(
      nodes.map((node) => ({
        id: node.id,
        slots: node.capacity!.slots,
        active: node.load?.active ?? 0,
      })),
    );
    this.#refreshedAt = now;
  }
}

function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return cause?.code === 'ECONNREFUSED' || (isKeelError(error) && error.code === 'node_refused');
}
