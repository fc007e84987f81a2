// The way out to a streamable-HTTP MCP server: Keel's own process is the client, so the checks a
// sandbox's egress proxy makes are made here, with the same rules (egress/allowlist.ts). The
// server's origin must be allowed (KEEL_MCP_ALLOWED_ORIGINS); each connection's resolved address
// is checked when the socket is made (a name that resolves to a private or loopback address is
// refused unless the allowed origin names that address itself: no DNS rebinding into the node's
// network); redirects are refused; and every request is recorded as an egress record of the
// service `mcp:<server>` for the tenant (audited like a sandbox's connections). undici, rather
// than Node's global fetch, because its Agent takes the lookup hook that checks the address at
// connect time.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { KeelError } from '../../domain/keel-error.ts';
import { addressAllowed, destinationOf } from '../../sandbox/egress/allowlist.ts';
import type { EgressRecord } from '../../sandbox/egress/egress-proxy.ts';

export interface HttpEgressOptions {
  /** Origins (`https://host:port`) servers may be at; `'any'` allows every origin. */
  allowedOrigins: readonly string[] | 'any';
  /** Each request, allowed or refused, once it has an outcome. */
  onRecord(record: EgressRecord): void;
}

export function checkOrigin(
  url: URL,
  options: { allowedOrigins: readonly string[] | 'any'; server: string },
): void {
  const allowed = options.allowedOrigins;
  if (allowed === 'any' || allowed.includes(url.origin)) return;
  throw new KeelError(
    'mcp_origin_not_allowed',
    `MCP server ${options.server}: origin ${url.origin} is not in the allowlist`,
    { details: { server: options.server, origin: url.origin } },
  );
}

/**
 * One per client pool: a connection pool (undici Agent) whose every new socket goes only to an
 * allowed address, and per server session a fetch that checks the origin and records requests.
 */
export class McpHttpEgress {
  readonly #options: HttpEgressOptions;
  readonly #agent: Agent;
  /** The address each host's last connection went to, for the records. */
  readonly #lastAddress = new Map<string, string>();

  constructor(options: HttpEgressOptions) {
    this.#options = options;
    this.#agent = new Agent({ connect: { lookup: this.#lookup } });
  }

  /** The fetch for the MCP SDK's HTTP transport of the server `server`, for `tenantId`. */
  fetchFor(server: string, tenantId: string): typeof fetch {
    const guarded = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      const record = (
        fields: Pick<
          EgressRecord,
          'address' | 'verdict' | 'reason' | 'bytesSent' | 'bytesReceived'
        >,
      ) =>
        this.#options.onRecord({
          tenantId,
          runId: '',
          executionId: null,
          sandboxId: '',
          service: `mcp:${server}`,
          kind: 'http',
          destination: destinationOf(host, port),
          injected: [],
          ...fields,
        });
      try {
        checkOrigin(url, { allowedOrigins: this.#options.allowedOrigins, server });
      } catch (error) {
        record({
          address: null,
          verdict: 'denied',
          reason: 'origin not allowed',
          bytesSent: 0,
          bytesReceived: 0,
        });
        throw error;
      }
      const sent = typeof init?.body === 'string' ? Buffer.byteLength(init.body) : 0;
      try {
        const response = (await undiciFetch(url, {
          ...(init as object),
          redirect: 'error',
          dispatcher: this.#agent,
        })) as unknown as Response;
        record({
          address: isIP(host) === 0 ? (this.#lastAddress.get(host) ?? null) : host,
          verdict: 'allowed',
          reason: null,
          bytesSent: sent,
          // As declared: a streamed answer (server-sent events) has no length and counts 0.
          bytesReceived: Number(response.headers.get('content-length') ?? 0),
        });
        return response;
      } catch (error) {
        const refused = findKeelError(error);
        record({
          address: null,
          verdict: refused === undefined ? 'allowed' : 'denied',
          reason: refused?.message ?? (error as Error).message,
          bytesSent: 0,
          bytesReceived: 0,
        });
        throw refused ?? error;
      }
    };
    return guarded as typeof fetch;
  }

  close(): Promise<void> {
    return this.#agent.destroy();
  }

  /** Resolves like the system does, keeping only the addresses the allowlist lets Keel reach. */
  readonly #lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      // With 'any' (development) any address; otherwise the egress rule for this host decides.
      const usable =
        this.#options.allowedOrigins === 'any'
          ? list
          : list.filter((entry) => addressAllowed({ host: hostname, port: 0 }, entry.address));
      const chosen = usable[0];
      if (chosen === undefined) {
        const refused = new KeelError(
          'mcp_origin_not_allowed',
          `${hostname} resolves to ${list.map((a) => a.address).join(', ')}, not a public address`,
          { details: { host: hostname } },
        );
        return callback(refused, '', 0);
      }
      this.#lastAddress.set(hostname, chosen.address);
      if ((lookupOptions as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [chosen]);
      return callback(null, chosen.address, chosen.family);
    });
  };
}

/** The KeelError behind a fetch failure (undici wraps the lookup's error as the cause). */
function findKeelError(error: unknown): KeelError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (current instanceof KeelError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
