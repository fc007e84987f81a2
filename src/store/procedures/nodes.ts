// The sandbox-node procedures both stores share (0046): create with a token hash, find by token,
// register, heartbeat, drain/undrain through the transition table, remove, list. Never sees a
// node's token: only its SHA-256 hash.
import { randomUUID } from 'node:crypto';
import { KeelError } from '../../domain/keel-error.ts';
import {
  type NodeCapacity,
  type NodeEvent,
  type NodeLoadReport,
  type NodeState,
  nodeTransition,
  type SandboxNodeRecord,
} from '../../domain/sandbox-nodes.ts';
import { all, one, run, type Procedure, type Row, type Tx } from './transaction.ts';

const json = <T>(text: unknown): T | null =>
  typeof text === 'string' ? (JSON.parse(text) as T) : null;

export function toSandboxNode(row: Row): SandboxNodeRecord {
  return {
    id: String(row.id),
    name: String(row.name),
    tokenHash: String(row.token_hash),
    state: String(row.state) as NodeState,
    url: row.url === null || row.url === undefined ? null : String(row.url),
    capacity: json<NodeCapacity>(row.capacity),
    load: json<NodeLoadReport>(row.load),
    createdAt: Number(row.created_at),
    heartbeatAt:
      row.heartbeat_at === null || row.heartbeat_at === undefined ? null : Number(row.heartbeat_at),
  };
}

export function* createNode(tx: Tx, name: string, tokenHash: string): Procedure<SandboxNodeRecord> {
  const id = `node_${randomUUID()}`;
  const inserted = yield* one('insert-node', {
    id,
    name,
    token_hash: tokenHash,
    state: 'pending',
    now: tx.now,
  });
  if (inserted === undefined)
    throw new KeelError('node_exists', `a sandbox node named ${name} exists already`);
  return toSandboxNode((yield* one('get-node', { id }))!);
}

export function* findNodeByToken(tokenHash: string): Procedure<SandboxNodeRecord | undefined> {
  const row = yield* one('find-node-by-token', { token_hash: tokenHash });
  return row === undefined ? undefined : toSandboxNode(row);
}

function* nodeOrThrow(id: string): Procedure<SandboxNodeRecord> {
  const row = yield* one('get-node', { id });
  if (row === undefined) throw new KeelError('node_not_found', `no sandbox node ${id}`);
  return toSandboxNode(row);
}

export function* registerNode(
  tx: Tx,
  id: string,
  url: string,
  capacity: NodeCapacity,
): Procedure<SandboxNodeRecord> {
  const node = yield* nodeOrThrow(id);
  const state = nodeTransition(node.state, 'register')!;
  yield run('register-node', {
    id,
    state,
    url,
    capacity: JSON.stringify(capacity),
    now: tx.now,
  });
  return yield* nodeOrThrow(id);
}

/** False when the node is gone or never registered (it must register again). */
export function* heartbeatNode(tx: Tx, id: string, load: NodeLoadReport): Procedure<boolean> {
  const changed = yield run('heartbeat-node', { id, load: JSON.stringify(load), now: tx.now });
  return Number(changed) > 0;
}

export function* moveNode(id: string, event: NodeEvent): Procedure<SandboxNodeRecord> {
  const node = yield* nodeOrThrow(id);
  const next = nodeTransition(node.state, event);
  if (next === undefined)
    throw new KeelError(
      'node_state_conflict',
      `sandbox node ${id} is ${node.state}: cannot ${event}`,
    );
  const changed = yield run('set-node-state', { id, from: node.state, state: next });
  if (Number(changed) === 0)
    throw new KeelError('node_state_conflict', `sandbox node ${id} changed meanwhile: try again`);
  return { ...node, state: next };
}

export function* removeNode(id: string): Procedure<void> {
  if (Number(yield run('delete-node', { id })) === 0)
    throw new KeelError('node_not_found', `no sandbox node ${id}`);
}

export function* listNodes(): Procedure<SandboxNodeRecord[]> {
  return (yield* all('list-nodes', {})).map(toSandboxNode);
}
