// Sandbox nodes as the store keeps them (issue 24): a host that runs sandboxed tool calls for the
// cluster, its token's hash (never the token), what it offers (capacity) and what it last reported
// (load). Its states are a transition table: a node is `pending` from its token's creation until it
// first registers, `ready` while it takes calls, `draining` when an admin stops new placements (its
// running calls finish). Vocabulary only: the API and `keel node` drive it.
import { createHash } from 'node:crypto';

export const NODE_STATE = { pending: 'pending', ready: 'ready', draining: 'draining' } as const;
export type NodeState = keyof typeof NODE_STATE;
export type NodeEvent = 'register' | 'drain' | 'undrain';

/** A drained node stays drained when it registers again (a restart does not undo an admin's drain). */
export const NODE_TRANSITIONS: Readonly<Record<NodeState, Partial<Record<NodeEvent, NodeState>>>> =
  {
    pending: { register: 'ready', drain: 'draining' },
    ready: { register: 'ready', drain: 'draining' },
    draining: { register: 'draining', drain: 'draining', undrain: 'ready' },
  };

/** The state after `event`, or undefined when a node in `from` cannot take it. */
export function nodeTransition(from: NodeState, event: NodeEvent): NodeState | undefined {
  return NODE_TRANSITIONS[from][event];
}

/** What a node offers, as it announces at registration. */
export interface NodeCapacity {
  cores: number;
  memoryBytes: number;
  /** Sandboxed calls it runs at once: its admission limit. */
  slots: number;
  /** Sandbox tiers that work on the host (doctor's probe). */
  tiers: string[];
  /** Images built on the host (content keys of src/sandbox/images). */
  images: string[];
  /** Warm sandboxes kept per profile. */
  warmPools: Record<string, number>;
}

/** What a node reported at its last heartbeat. */
export interface NodeLoadReport {
  active: number;
  /** 1-minute load average over cores. */
  cpu: number;
  memoryUsedBytes: number;
}

export interface SandboxNodeRecord {
  id: string;
  name: string;
  /**
   * SHA-256 of the node's token: also the key placers sign their calls to the node with, so the
   * node knows a call comes from the cluster (never shown by the API).
   */
  tokenHash: string;
  state: NodeState;
  /** Where the node takes calls (`http://host:port`), announced at registration; null while pending. */
  url: string | null;
  capacity: NodeCapacity | null;
  load: NodeLoadReport | null;
  createdAt: number;
  heartbeatAt: number | null;
}

/** A node token's stored form: hex SHA-256 of the token (the token itself is shown once). */
export function nodeTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
