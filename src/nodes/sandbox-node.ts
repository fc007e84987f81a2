// `keel node`: one sandbox host of the cluster. It registers with a Keel server using its node
// token (where it takes calls, its cores, memory, slots, working tiers, built images), heartbeats
// its load every few seconds (calls running, cpu, memory), and runs the calls placers send it
// with its own SandboxManager (node-server.ts). Workspaces and artifacts live in the cluster's
// database (KEEL_DATABASE_URL), so a run's workspace is rebuilt from its artifacts on whichever
// node its next call lands. Transport, chosen: HTTP from the placer to the node (the node
// announces its url): a call is one request whose connection is the call's lifetime, so a node
// killed mid-call is seen at once by the placer (the connection dies) rather than after a poll
// timeout, and refusal is an immediate answer. Both ways are authenticated by the node token: the
// node sends it as a bearer to the server; placers sign calls with its hash (node-call.ts).
import { availableParallelism, freemem, loadavg, totalmem } from 'node:os';
import type { Logger } from 'pino';
import type { KeelConfig } from '../config/config.ts';
import { KeelError } from '../domain/keel-error.ts';
import { type NodeCapacity, type NodeLoadReport, nodeTokenHash } from '../domain/sandbox-nodes.ts';
import { auditSecretUse } from '../sandbox/egress/egress-audit.ts';
import { attachNodeSandboxes, imageCacheFor } from '../sandbox/node-sandboxes.ts';
import { probeTiers } from '../sandbox/tier-probe.ts';
import { EnvKeyProvider } from '../secrets/key-provider.ts';
import { SecretVault } from '../secrets/secret-vault.ts';
import { selectBackend } from '../store/open-store.ts';
import { NodeServer } from './node-server.ts';

export interface SandboxNodeOptions {
  serverUrl: string;
  token: string;
  host: string;
  port: number;
  /** The url placers reach this node at; default `http://<host>:<port>`. */
  advertiseUrl?: string | undefined;
  config: KeelConfig;
  log: Logger;
}

export interface RunningSandboxNode {
  readonly url: string;
  readonly id: string;
  stop(): Promise<void>;
}

/** How long a stopping node lets its running calls finish before it closes them. */
const STOP_GRACE_MS = 30_000;

export async function startSandboxNode(options: SandboxNodeOptions): Promise<RunningSandboxNode> {
  const { config, log } = options;
  if (config.databaseUrl === undefined)
    throw new KeelError(
      'validation_failed',
      'keel node needs KEEL_DATABASE_URL: workspaces and their artifacts are in the cluster’s database',
    );
  const backend = selectBackend({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
  }).open();
  const store = backend.runs;
  const secrets = new SecretVault(
    store,
    config.secretsKey === undefined ? undefined : new EnvKeyProvider(config.secretsKey),
  );
  const sandboxes = attachNodeSandboxes(store, config, {
    revealSecret: async (tenantId, ref, use) => {
      const value = await secrets.reveal(tenantId, ref);
      await auditSecretUse(store, tenantId, ref, use);
      return value;
    },
  });
  const cores = availableParallelism();
  const slots = config.nodeSlots ?? cores;
  let state: 'ready' | 'draining' | 'pending' = 'pending';
  let stopping = false;
  const server = new NodeServer({
    tokenHash: nodeTokenHash(options.token),
    slots,
    manager: () => sandboxes.manager(),
    accepting: () => !stopping && state !== 'draining',
    onCall: ({ executionId, runId, admitted }) =>
      log.info(
        { executionId, runId, admitted },
        admitted ? 'sandbox call admitted' : 'sandbox call refused',
      ),
  });
  const port = await server.listen(options.port, options.host);
  const url = options.advertiseUrl ?? `http://${options.host}:${port}`;
  const tiers = (await probeTiers()).filter((t) => t.ok).map((t) => t.tier);
  const capacity: NodeCapacity = {
    cores,
    memoryBytes: totalmem(),
    slots,
    tiers,
    images: imageCacheFor(config)
      .list()
      .map((image) => image.hash),
    warmPools: {},
  };
  const api = (path: string, method: string, body: unknown) =>
    fetch(new URL(path, options.serverUrl), {
      method,
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const register = async (): Promise<{ id: string; heartbeatMs: number }> => {
    const response = await api('/v1/admin/nodes/self', 'PUT', { url, capacity });
    const answer = (await response.json()) as {
      node?: { id: string; state: typeof state };
      heartbeatMs?: number;
      error?: { code: string; message: string };
    };
    if (!response.ok || answer.node === undefined)
      throw new KeelError(
        (answer.error?.code as 'node_token_invalid' | undefined) ?? 'node_token_invalid',
        `registration refused by ${options.serverUrl}: ${answer.error?.message ?? response.status}`,
      );
    state = answer.node.state;
    return { id: answer.node.id, heartbeatMs: answer.heartbeatMs ?? 2_000 };
  };
  let registered: { id: string; heartbeatMs: number };
  try {
    registered = await register();
  } catch (error) {
    await server.close();
    await sandboxes.close();
    await store.close();
    throw error;
  }
  log.info({ node: registered.id, url, capacity }, 'sandbox node registered');
  const load = (): NodeLoadReport => ({
    active: server.active,
    cpu: Math.round((loadavg()[0]! / cores) * 1000) / 1000,
    memoryUsedBytes: totalmem() - freemem(),
  });
  const beat = async () => {
    try {
      const response = await api('/v1/admin/nodes/self/heartbeat', 'POST', { load: load() });
      if (response.status === 404) {
        await response.body?.cancel();
        registered = await register();
        return;
      }
      const answer = (await response.json()) as { state?: typeof state };
      if (answer.state !== undefined) state = answer.state;
    } catch (error) {
      // The server may be restarting: the next beat tries again; placers stop choosing this node
      // once its heartbeat is stale.
      log.warn({ err: error }, 'heartbeat failed');
    }
  };
  const timer = setInterval(() => void beat(), registered.heartbeatMs);
  timer.unref();
  await beat();
  return {
    url,
    get id() {
      return registered.id;
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      const until = Date.now() + STOP_GRACE_MS;
      while (server.active > 0 && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 100));
      await server.close();
      await sandboxes.close();
      await store.close();
    },
  };
}
