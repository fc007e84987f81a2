// POST /v1/mcp: Keel as an MCP server over streamable HTTP (stateless: a server and transport per
// request, so any API process answers any request). Authenticated by the tenant's API key like the
// rest of /v1 (the route needs `read`; calling an agent needs `submit` too). The tools are the
// agents (src/api/mcp-agent-tools.ts).
import type { FastifyInstance } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { KeelError, isKeelError } from '../../domain/keel-error.ts';
import type { AgentRegistry } from '../../engine/registry.ts';
import type { Store } from '../../store/store.ts';
import type { Identity } from '../auth.ts';
import type { EventHub } from '../event-hub.ts';
import { GET_RUN_TOOL, callAgentTool, listAgentTools, waitMsOf } from '../mcp-agent-tools.ts';
import { requireScope } from '../route-scopes.ts';
import { ErrorBody, errorResponse } from '../schemas.ts';

export interface McpRouteDeps {
  store: Store;
  registry: AgentRegistry;
  hub: EventHub;
  identityOf(request: unknown): Identity;
  version: string;
}

export function registerMcpRoute(app: FastifyInstance, deps: McpRouteDeps): void {
  app.post(
    '/v1/mcp',
    {
      schema: {
        summary:
          'MCP (streamable HTTP, stateless): each agent is a tool that runs it and returns its result; keel_get_run polls a run',
        tags: ['mcp'],
        description:
          'Speak MCP (JSON-RPC 2.0 over streamable HTTP, protocol of @modelcontextprotocol/sdk) with the tenant key as a bearer token. Answers are JSON-RPC (application/json or text/event-stream); Keel’s own errors before MCP starts use the Error envelope.',
        response: {
          200: z.unknown().describe('A JSON-RPC response, or an event stream of them'),
          400: errorResponse(
            'A query parameter was sent, or the body is not a JSON-RPC 2.0 message (or batch)',
          ),
          401: ErrorBody,
          403: ErrorBody,
          406: errorResponse('not_acceptable: Accept lacks application/json or text/event-stream'),
        },
      },
    },
    async (request, reply) => {
      const identity = deps.identityOf(request);
      checkMcpRequest(request.headers.accept, request.body);
      const server = mcpServerFor(deps, identity);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
}

/**
 * Refuses, in Keel's error envelope, what the MCP transport would refuse in JSON-RPC's: a client
 * that cannot take both answer forms, a body that is no JSON-RPC message. Past this, answers are
 * MCP's.
 */
function checkMcpRequest(accept: string | undefined, body: unknown): void {
  if (!(accept?.includes('application/json') && accept.includes('text/event-stream')))
    throw new KeelError(
      'not_acceptable',
      'MCP: the Accept header must include both application/json and text/event-stream',
    );
  const messages = Array.isArray(body) ? body : [body];
  if (
    body === undefined ||
    messages.length === 0 ||
    !messages.every((m) => JSONRPCMessageSchema.safeParse(m).success)
  )
    throw new KeelError(
      'validation_failed',
      'MCP: the body must be a JSON-RPC 2.0 message or a batch of them',
    );
}

function mcpServerFor(deps: McpRouteDeps, identity: Identity): Server {
  const server = new Server(
    { name: 'keel', version: deps.version },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: listAgentTools(deps.registry),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {}, _meta: meta } = request.params;
    if (name !== GET_RUN_TOOL) {
      try {
        requireScope(identity, 'submit', `MCP tool ${name}`);
      } catch (error) {
        if (!isKeelError(error)) throw error;
        return {
          content: [{ type: 'text', text: `${error.code}: ${error.message}` }],
          isError: true,
        };
      }
    }
    const token = meta?.progressToken;
    return callAgentTool(deps, name, args, {
      tenant: identity.tenant,
      waitMs: waitMsOf(meta as Record<string, unknown> | undefined),
      signal: extra.signal,
      progress:
        token === undefined
          ? undefined
          : (progress, message) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress, message },
              }),
    });
  });
  return server;
}
