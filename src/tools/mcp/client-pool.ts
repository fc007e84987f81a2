// Client sessions to MCP servers, pooled per (tenant, server configuration): a few sessions per
// server, each carrying many concurrent calls (MCP multiplexes requests over one session), closed
// after MCP_SESSION_IDLE_CLOSE_MS without a call, and dropped on any transport error or close so
// the next call connects anew. stdio servers run in a sandbox of their own from this node's sandbox
// manager (their configuration's image, limits, allowlist and secrets). Streamable-HTTP servers are reached from this process, only at
// allowed origins, redirects refused. Errors leave here typed: mcp_server_unavailable (connect,
// transport, timeout), mcp_tool_error (the tool said isError). It never journals anything: the
// tool runner does, around the calls made here.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import stringify from 'safe-stable-stringify';
import { KeelError, isKeelError } from '../../domain/keel-error.ts';
import type { Json } from '../../domain/json.ts';
import type { McpServerConfig } from '../../sdk/mcp-server-config.ts';
import type { SandboxManager } from '../../sandbox/sandbox-manager.ts';
import type { EgressRecord, RevealSecret } from '../../sandbox/egress/egress-proxy.ts';
import { checkOrigin, McpHttpEgress } from './http-egress.ts';
import { SandboxStdioTransport } from './sandbox-stdio-transport.ts';
import { serviceProfileOf, serviceRequestOf } from './stdio-sandbox.ts';
import type { ListedTool } from './tool-pin.ts';

/** A session with no call in flight for this long is closed (its stdio server exits). */
export const MCP_SESSION_IDLE_CLOSE_MS = 60_000;
/** Sessions per (tenant, server); calls spread over them, least busy first. */
export const MCP_SESSIONS_PER_SERVER = 2;
/** A server must answer `initialize` within this long. */
export const MCP_CONNECT_TIMEOUT_MS = 20_000;
/** Keel's name for itself in `initialize`. */
const CLIENT_INFO = { name: 'keel', version: '0.1.0' };
/** Where a call's execution id travels: the request's `_meta` (MCP has no idempotency key). */
export const EXECUTION_ID_META_KEY = 'io.keel/executionId';

export interface McpClientPoolOptions {
  /**
   * Origins (`https://host:port`) streamable-HTTP servers may be at; `'any'` allows every origin
   * (development only).
   */
  allowedOrigins: readonly string[] | 'any';
  /** Reads a variable named by `headersFromEnv` (the runtime passes its environment). */
  env(name: string): string | undefined;
  /** This node's sandbox manager, which runs stdio servers (called at each stdio connect). */
  sandboxes(): SandboxManager;
  /** Each request to a streamable-HTTP server, allowed or refused (audited by the runtime). */
  onEgress?: (record: EgressRecord) => void;
  /** The current value of a tenant's `secret:NAME`, for `secretHeaders` (audited by the runtime). */
  revealSecret?: RevealSecret;
  idleCloseMs?: number;
  sessionsPerServer?: number;
}

interface Session {
  client: Client;
  inFlight: number;
  idleTimer: NodeJS.Timeout | undefined;
  closed: boolean;
  cleanup(): void;
}

export interface CallOptions {
  executionId: string;
  signal: AbortSignal;
}

export class McpClientPool {
  readonly #options: McpClientPoolOptions;
  readonly #sessions = new Map<string, Session[]>();
  readonly #connecting = new Map<string, Promise<Session>>();
  #closed = false;

  readonly #http: McpHttpEgress;

  constructor(options: McpClientPoolOptions) {
    this.#options = options;
    this.#http = new McpHttpEgress({
      allowedOrigins: options.allowedOrigins,
      onRecord: options.onEgress ?? (() => undefined),
    });
  }

  async listTools(tenantId: string, config: McpServerConfig): Promise<ListedTool[]> {
    return this.#with(tenantId, config, async (client) => {
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        tools.push(...(page.tools as ListedTool[]));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    });
  }

  /** Calls a tool; its answer is `{ content, structuredContent? }`, or mcp_tool_error if isError. */
  async callTool(
    tenantId: string,
    config: McpServerConfig,
    name: string,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<Json> {
    const result = await this.#with(tenantId, config, (client) =>
      client.callTool(
        { name, arguments: args, _meta: { [EXECUTION_ID_META_KEY]: options.executionId } },
        undefined,
        { signal: options.signal, timeout: config.callTimeoutMs },
      ),
    );
    const answer = JSON.parse(
      JSON.stringify({
        content: result.content ?? [],
        ...(result.structuredContent === undefined
          ? {}
          : { structuredContent: result.structuredContent }),
      }),
    ) as Json;
    if (result.isError === true)
      throw new KeelError('mcp_tool_error', `MCP tool ${config.name}/${name} reported an error`, {
        details: { server: config.name, tool: name, answer },
      });
    return answer;
  }

  /** Closes every session (stdio servers exit); later calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#sessions.values()].flat();
    this.#sessions.clear();
    await Promise.all(all.map((s) => this.#drop(s)));
    await this.#http.close();
  }

  /** Open sessions, for tests and metrics. */
  openSessions(): number {
    return [...this.#sessions.values()].reduce((n, list) => n + list.length, 0);
  }

  async #with<T>(
    tenantId: string,
    config: McpServerConfig,
    use: (client: Client) => Promise<T>,
  ): Promise<T> {
    const key = `${tenantId}\u0000${stringify(config)}`;
    const session = await this.#acquire(key, tenantId, config);
    session.inFlight++;
    clearTimeout(session.idleTimer);
    try {
      return await use(session.client);
    } catch (error) {
      throw this.#typed(error, config, session);
    } finally {
      session.inFlight--;
      if (session.inFlight === 0 && !session.closed) {
        session.idleTimer = setTimeout(
          () => void this.#retire(key, session),
          this.#options.idleCloseMs ?? MCP_SESSION_IDLE_CLOSE_MS,
        );
        session.idleTimer.unref();
      }
    }
  }

  async #acquire(key: string, tenantId: string, config: McpServerConfig): Promise<Session> {
    if (this.#closed)
      throw new KeelError('mcp_server_unavailable', 'the MCP client pool is closed');
    const live = (this.#sessions.get(key) ?? []).filter((s) => !s.closed);
    const idle = live.find((s) => s.inFlight === 0);
    const room = live.length < (this.#options.sessionsPerServer ?? MCP_SESSIONS_PER_SERVER);
    if (idle !== undefined || (!room && live.length > 0))
      return idle ?? live.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
    // One connect at a time per key: a burst of first calls shares it instead of starting N servers.
    let pending = this.#connecting.get(key);
    if (pending === undefined) {
      pending = this.#connect(key, tenantId, config).finally(() => this.#connecting.delete(key));
      this.#connecting.set(key, pending);
    }
    return pending;
  }

  async #connect(key: string, tenantId: string, config: McpServerConfig): Promise<Session> {
    const { transport, cleanup, stderr } = this.#transport(tenantId, config);
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session: Session = { client, inFlight: 0, idleTimer: undefined, closed: false, cleanup };
    // Any transport failure ends the session: the next call reconnects (a stdio server that died
    // is started again).
    let transportError: unknown;
    client.onclose = () => void this.#retire(key, session);
    client.onerror = (error) => {
      transportError ??= error;
      void this.#retire(key, session);
    };
    try {
      await client.connect(transport, { timeout: MCP_CONNECT_TIMEOUT_MS });
    } catch (error) {
      session.closed = true;
      await client.close().catch(() => undefined);
      cleanup();
      // A refusal of Keel's own (an address the allowlist does not allow) keeps its code.
      if (isKeelError(transportError)) throw transportError;
      throw new KeelError(
        'mcp_server_unavailable',
        `MCP server ${config.name} could not be started or initialised: ${(error as Error).message}${stderr?.() ? ` (stderr: ${stderr()})` : ''}`,
        { retryable: true, details: { server: config.name }, cause: error },
      );
    }
    this.#sessions.set(key, [...(this.#sessions.get(key) ?? []), session]);
    return session;
  }

  #transport(
    tenantId: string,
    config: McpServerConfig,
  ): {
    transport: Transport;
    cleanup(): void;
    stderr?: () => string;
  } {
    const t = config.transport;
    if (t.type === 'stdio') {
      // The environment (and its program) is made at start() and torn down at close().
      const transport = new SandboxStdioTransport(async () =>
        this.#options
          .sandboxes()
          .openService(serviceProfileOf(config), serviceRequestOf(tenantId, config.name, t)),
      );
      return { transport, cleanup: () => undefined, stderr: () => transport.stderrTail() };
    }
    const url = new URL(t.url);
    checkOrigin(url, { allowedOrigins: this.#options.allowedOrigins, server: config.name });
    const headers: Record<string, string> = {};
    for (const [header, variable] of Object.entries(t.headersFromEnv)) {
      const value = this.#options.env(variable);
      if (value === undefined)
        throw new KeelError(
          'mcp_server_unavailable',
          `MCP server ${config.name}: environment variable ${variable} (header ${header}) is not set`,
        );
      headers[header] = value;
    }
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers },
      // Every request's origin and address are checked, and a redirect is an error: a server
      // cannot send Keel (and its headers) somewhere the allowlist does not name.
      fetch: this.#http.fetchFor(config.name, tenantId),
    });
    if (t.secretHeaders.length > 0) {
      // Revealed when the session starts (the transport's start), so a rotation applies from
      // the next session; each use is audited by the runtime's revealSecret.
      const start = transport.start.bind(transport);
      transport.start = async () => {
        for (const entry of t.secretHeaders) {
          const value = await this.#revealSecret(tenantId, entry.secret, {
            runId: '',
            executionId: null,
            via: 'header',
            destination: url.host,
          });
          headers[entry.header.toLowerCase()] = entry.format.replaceAll('{secret}', value);
        }
        return start();
      };
    }
    return { transport, cleanup: () => undefined };
  }

  #revealSecret(...args: Parameters<RevealSecret>): Promise<string> {
    if (this.#options.revealSecret === undefined)
      throw new KeelError('secrets_unconfigured', 'this node was started without secrets');
    return this.#options.revealSecret(...args);
  }

  #typed(error: unknown, config: McpServerConfig, session: Session): unknown {
    if (isKeelError(error)) return error;
    if (error instanceof McpError && error.code > -32_100 && error.code <= -32_000) {
      // Connection closed (-32000) or request timeout (-32001): the session is suspect; drop it.
      void this.#retireSession(session);
      return new KeelError(
        'mcp_server_unavailable',
        `MCP server ${config.name}: ${error.message}`,
        { retryable: true, details: { server: config.name, mcpCode: error.code }, cause: error },
      );
    }
    if (error instanceof McpError)
      return new KeelError('mcp_tool_error', `MCP server ${config.name}: ${error.message}`, {
        details: { server: config.name, mcpCode: error.code },
        cause: error,
      });
    if (error instanceof Error && error.name === 'AbortError') return error;
    void this.#retireSession(session);
    return new KeelError(
      'mcp_server_unavailable',
      `MCP server ${config.name}: ${(error as Error)?.message ?? String(error)}`,
      { retryable: true, details: { server: config.name }, cause: error },
    );
  }

  async #retireSession(session: Session): Promise<void> {
    for (const [key, list] of this.#sessions)
      if (list.includes(session)) return this.#retire(key, session);
  }

  async #retire(key: string, session: Session): Promise<void> {
    const list = (this.#sessions.get(key) ?? []).filter((s) => s !== session);
    if (list.length === 0) this.#sessions.delete(key);
    else this.#sessions.set(key, list);
    await this.#drop(session);
  }

  async #drop(session: Session): Promise<void> {
    if (session.closed) return;
    session.closed = true;
    clearTimeout(session.idleTimer);
    await session.client.close().catch(() => undefined);
    session.cleanup();
  }
}
