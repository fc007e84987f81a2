// Sandbox nodes (/v1/admin/nodes; issue 24). A platform admin creates a node (its token is shown
// once and stored as a SHA-256 hash), lists nodes with their capacity and last load, drains,
// undrains and removes them. `keel node` itself uses the two `self` routes with its node token
// (never an admin key): register (where it listens, what it offers) and heartbeat (its load). The
// store keeps the view placers read; these routes never place a call.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import { nodeTokenHash, type SandboxNodeRecord } from '../../domain/sandbox-nodes.ts';
import type { Store } from '../../store/store.ts';
import { adminActorOf, authorizeAdmin } from '../admin-auth.ts';
import { bearerToken } from '../auth.ts';
import { ErrorBody, PathId, plainText, PLAIN_TEXT_RULE } from '../schemas.ts';

/** A node token's prefix: tells it apart from API and admin keys in logs and config. */
export const NODE_TOKEN_PREFIX = 'keel_node_';
/** How often a node heartbeats, as the server tells it at registration. */
export const NODE_HEARTBEAT_MS = 2_000;

export interface AdminNodeRoutesDeps {
  store: Store;
  adminKey: string | undefined;
}

const Capacity = z.strictObject({
  cores: z.number().int().min(1).max(4096),
  memoryBytes: z.number().int().min(0),
  slots: z.number().int().min(0).max(100_000),
  tiers: z.array(z.string().max(32)).max(8),
  images: z.array(z.string().max(128)).max(1_000),
  warmPools: z.record(z.string().max(64), z.number().int().min(0).max(10_000)),
});
const Load = z.strictObject({
  active: z.number().int().min(0),
  cpu: z.number().min(0),
  memoryUsedBytes: z.number().int().min(0),
});

const SandboxNode = z
  .object({
    id: z.string(),
    name: z.string(),
    state: z.enum(['pending', 'ready', 'draining']),
    url: z.string().nullable(),
    capacity: Capacity.nullable(),
    load: Load.nullable(),
    createdAt: z.string(),
    heartbeatAt: z.string().nullable(),
  })
  .meta({ id: 'SandboxNode' });

const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody };

function nodeView({ tokenHash: _hidden, ...node }: SandboxNodeRecord): z.infer<typeof SandboxNode> {
  return {
    ...node,
    createdAt: new Date(node.createdAt).toISOString(),
    heartbeatAt: node.heartbeatAt === null ? null : new Date(node.heartbeatAt).toISOString(),
  };
}

/** The node a request's bearer token belongs to; 401 `node_token_invalid` otherwise. */
async function nodeOf(store: Store, request: FastifyRequest): Promise<SandboxNodeRecord> {
  const token = bearerToken(request);
  const node = token === undefined ? undefined : await store.findNodeByToken(nodeTokenHash(token));
  if (node === undefined)
    throw new KeelError(
      'node_token_invalid',
      'node routes need Authorization: Bearer <node token> of an existing node (keel nodes create)',
    );
  return node;
}

export function registerAdminNodeRoutes(app: FastifyInstance, deps: AdminNodeRoutesDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const admin = async (request: FastifyRequest) => authorizeAdmin(request, deps.adminKey);
  const audit = (request: FastifyRequest, action: string, node: string) =>
    request.log.info({ action, node, by: adminActorOf(request) }, action);

  r.post(
    '/v1/admin/nodes',
    {
      onRequest: admin,
      schema: {
        summary: 'Create a sandbox node; its token (for keel node --token) is returned once',
        tags: ['admin'],
        body: z.strictObject({
          name: plainText(100).describe(
            `The node's name (unique), e.g. host-a; ${PLAIN_TEXT_RULE}`,
          ),
        }),
        response: {
          201: z.object({
            node: SandboxNode,
            token: z.string().describe('The node token: shown this once, stored only as a hash'),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const token = `${NODE_TOKEN_PREFIX}${randomBytes(24).toString('base64url')}`;
      const node = await deps.store.createNode(request.body.name, nodeTokenHash(token));
      audit(request, 'node.create', node.id);
      return reply.status(201).send({ node: nodeView(node), token });
    },
  );

  r.get(
    '/v1/admin/nodes',
    {
      onRequest: admin,
      schema: {
        summary: 'The sandbox nodes by name: state, capacity, last load and heartbeat',
        tags: ['admin'],
        response: { 200: z.object({ nodes: z.array(SandboxNode) }), ...errors },
      },
    },
    async () => ({ nodes: (await deps.store.listNodes()).map(nodeView) }),
  );

  for (const event of ['drain', 'undrain'] as const) {
    r.post(
      `/v1/admin/nodes/:id/${event}`,
      {
        onRequest: admin,
        schema: {
          summary:
            event === 'drain'
              ? 'Stop placing calls on a node (its running calls finish; it stays drained across restarts)'
              : 'Place calls on a drained node again',
          tags: ['admin'],
          params: z.object({ id: PathId }),
          response: { 200: z.object({ node: SandboxNode }), ...errors },
        },
      },
      async (request) => {
        const node = await deps.store.moveNode(request.params.id, event);
        audit(request, `node.${event}`, node.id);
        return { node: nodeView(node) };
      },
    );
  }

  r.delete(
    '/v1/admin/nodes/:id',
    {
      onRequest: admin,
      schema: {
        summary: 'Remove a node and its token (it can no longer register or heartbeat)',
        tags: ['admin'],
        params: z.object({ id: PathId }),
        response: { 204: z.null(), ...errors },
      },
    },
    async (request, reply) => {
      await deps.store.removeNode(request.params.id);
      audit(request, 'node.remove', request.params.id);
      return reply.status(204).send(null);
    },
  );

  r.put(
    '/v1/admin/nodes/self',
    {
      schema: {
        summary: 'keel node: register where it takes calls and what it offers (node token)',
        tags: ['admin'],
        body: z.strictObject({
          url: z.url({ protocol: /^https?$/ }).max(2_048),
          capacity: Capacity,
        }),
        response: {
          200: z.object({ node: SandboxNode, heartbeatMs: z.number().int() }),
          ...errors,
        },
      },
    },
    async (request) => {
      const node = await nodeOf(deps.store, request);
      const registered = await deps.store.registerNode(
        node.id,
        request.body.url,
        request.body.capacity,
      );
      request.log.info({ action: 'node.register', node: node.id }, 'sandbox node registered');
      return { node: nodeView(registered), heartbeatMs: NODE_HEARTBEAT_MS };
    },
  );

  r.post(
    '/v1/admin/nodes/self/heartbeat',
    {
      schema: {
        summary: 'keel node: report its load (node token); 404 node_not_found: register again',
        tags: ['admin'],
        body: z.strictObject({ load: Load }),
        response: { 200: z.object({ state: z.enum(['pending', 'ready', 'draining']) }), ...errors },
      },
    },
    async (request) => {
      const node = await nodeOf(deps.store, request);
      if (!(await deps.store.heartbeatNode(node.id, request.body.load)))
        throw new KeelError(
          'node_not_found',
          `sandbox node ${node.id} is not registered: register again`,
        );
      return { state: node.state };
    },
  );
}
