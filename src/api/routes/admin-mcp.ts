// /v1/admin/tenants/:id/mcp-servers: a tenant's MCP servers (docs/guides/mcp.md), put by name
// (insert or replace), listed and deleted by the platform admin (KEEL_ADMIN_KEY). Configurations
// are validated against the one MCP server schema before they are stored; no server is contacted
// here (a run pins a server's tools at its first use).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { Json } from '../../domain/json.ts';
import type { Store } from '../../store/store.ts';
import {
  MCP_SERVER_NAME_PATTERN,
  McpServerConfigSchema,
  parseMcpServerConfig,
} from '../../sdk/mcp-server-config.ts';
import { checkedMcpServerConfig } from '../../tools/mcp/service-sandbox.ts';
import { authorizeAdmin } from '../admin-auth.ts';
import { ErrorBody, errorResponse, PathId, TenantParams } from '../schemas.ts';

const ServerParams = z.object({
  id: PathId,
  name: z.string().regex(MCP_SERVER_NAME_PATTERN),
});
const ServerBody = McpServerConfigSchema.omit({ name: true }).meta({ id: 'McpServerConfig' });
const ServerView = z
  .object({
    name: z.string(),
    config: z.record(z.string(), z.unknown()),
    updatedAt: z.string(),
  })
  .meta({ id: 'McpServer' });

export interface AdminMcpRoutesDeps {
  store: Store;
  adminKey: string | undefined;
}

export function registerAdminMcpRoutes(app: FastifyInstance, deps: AdminMcpRoutesDeps): void {
  const authorize = (request: FastifyRequest) => authorizeAdmin(request, deps.adminKey);
  const api = app.withTypeProvider<ZodTypeProvider>();
  const view = (row: { name: string; config: Json; updatedAt: number }) => ({
    name: row.name,
    config: row.config as Record<string, unknown>,
    updatedAt: new Date(row.updatedAt).toISOString(),
  });

  api.put(
    '/v1/admin/tenants/:id/mcp-servers/:name',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'Put a tenant’s MCP server (insert or replace)',
        tags: ['admin'],
        params: ServerParams,
        body: ServerBody,
        response: {
          200: z.object({ server: ServerView }),
          400: errorResponse('mcp_config_invalid or validation_failed: the body breaks its schema'),
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request) => {
      const config = checkedMcpServerConfig(
        parseMcpServerConfig({ ...request.body, name: request.params.name }),
      );
      const row = await deps.store.putMcpServer(
        request.params.id,
        config.name,
        config as unknown as Json,
      );
      return { server: view(row) };
    },
  );

  api.get(
    '/v1/admin/tenants/:id/mcp-servers',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'List a tenant’s MCP servers',
        tags: ['admin'],
        params: TenantParams,
        response: {
          200: z.object({ servers: z.array(ServerView) }),
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request) => {
      if ((await deps.store.getTenant(request.params.id)) === null)
        throw new KeelError('tenant_not_found', `no tenant ${request.params.id}`);
      return { servers: (await deps.store.listMcpServers(request.params.id)).map(view) };
    },
  );

  api.delete(
    '/v1/admin/tenants/:id/mcp-servers/:name',
    {
      onRequest: async (request) => authorize(request),
      schema: {
        summary: 'Remove a tenant’s MCP server (runs that pinned its tools keep their pins)',
        tags: ['admin'],
        params: ServerParams,
        response: { 204: z.null(), 401: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!(await deps.store.deleteMcpServer(request.params.id, request.params.name)))
        throw new KeelError(
          'mcp_server_not_found',
          `tenant ${request.params.id} has no MCP server ${request.params.name}`,
        );
      return reply.status(204).send(null);
    },
  );
}
