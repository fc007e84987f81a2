// Keel's egress proxy: the one way out of a sandbox that may use the network. Each sandbox gets its
// own Unix socket (so every connection is known to come from that sandbox, and is attributed to the
// run and execution of the call it makes at that moment); it speaks HTTP CONNECT (TLS, passed
// through untouched) and plain-HTTP forward proxying. Per connection it checks the name against the
// allowlist (the profile's, narrowed by the tenant's and the run's lists), resolves it itself, checks the address, connects, counts bytes both ways and reports a
// record when the connection ends. For plain HTTP to a rule with an injection it sets the header
// from the tenant's secret on the way out; the sandbox never holds that value. It never logs or
// records a header, a body or a secret: records carry names, addresses, verdicts and byte counts.
import { lookup } from 'node:dns/promises';
import { chmod, rm } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import type { EgressNarrowing } from '../../domain/egress-scope.ts';
import {
  addressAllowed,
  destinationOf,
  matchRule,
  narrowingRefusal,
  type EgressRule,
} from './allowlist.ts';

/** Who is calling through a sandbox's socket right now: set for the duration of each call. */
export interface EgressCall {
  tenantId: string;
  runId: string;
  executionId: string | undefined;
  rules: readonly EgressRule[];
  /**
   * The tenant's and the run's lists, when they have one: a destination must also match each of
   * them (they narrow `rules`, never widen them).
   */
  narrowings?: readonly EgressNarrowing[] | undefined;
  /** A long-lived service's name (`mcp:<server>`) when the connections are its, not a call's. */
  service?: string | undefined;
}

export interface EgressRecord {
  tenantId: string;
  runId: string;
  executionId: string | null;
  sandboxId: string;
  /** The service that connected (`mcp:<server>`), when not a run's call. */
  service: string | null;
  /** `connect` (CONNECT tunnel) or `http` (a forwarded plain-HTTP request). */
  kind: 'connect' | 'http';
  destination: string;
  /** The address connected to (or refused), after resolution; null when resolution did not happen. */
  address: string | null;
  verdict: 'allowed' | 'denied';
  /** Why it was denied, or why an allowed connection failed; null when it went through. */
  reason: string | null;
  bytesSent: number;
  bytesReceived: number;
  /** Names of the secrets injected into the request (never values). */
  injected: string[];
}

/** Where a revealed secret goes: audited by the runtime as `secret.use` (never the value). */
export interface SecretUse {
  runId: string;
  executionId: string | null;
  /**
   * `header`: added by the proxy to a request to `destination`; `env`: a sandbox variable; `file`:
   * a file placed in the sandbox (secret-files.ts).
   */
  via: 'header' | 'env' | 'file';
  destination?: string;
}

/** The current value of the tenant's `secret:NAME`, for one use (only for injection). */
export type RevealSecret = (tenantId: string, ref: string, use: SecretUse) => Promise<string>;

export interface EgressProxyOptions {
  /** Called once per connection when it ends (or is refused). */
  onRecord(record: EgressRecord): void;
  /** The current value of the tenant's `secret:NAME` (only for injection; never stored here). */
  revealSecret: RevealSecret;
}

/** Longest a name resolution may take before the connection is refused. */
const RESOLVE_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** Connections one sandbox may hold open through the proxy at once; more are closed at once. */
export const EGRESS_CONNECTIONS_MAX_PER_SANDBOX = 256;
/** Headers that are the proxy's, never forwarded (the hop-by-hop ones and the proxy's own). */
const DROPPED_HEADERS = new Set([
  'proxy-authorization',
  'proxy-connection',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
]);

interface Endpoint {
  server: Server;
  socketPath: string;
  call: EgressCall | undefined;
}

class Refused extends Error {}

export class EgressProxy {
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly options: EgressProxyOptions;

  constructor(options: EgressProxyOptions) {
    this.options = options;
  }

  /** Listens on `socketPath` for the sandbox `sandboxId` (its directory must exist). */
  async open(sandboxId: string, socketPath: string): Promise<void> {
    if (this.endpoints.has(sandboxId)) return;
    await rm(socketPath, { force: true });
    const endpoint: Endpoint = { server: createServer(), socketPath, call: undefined };
    endpoint.server.maxConnections = EGRESS_CONNECTIONS_MAX_PER_SANDBOX;
    endpoint.server.on('request', (req, res) => void this.forward(sandboxId, endpoint, req, res));
    endpoint.server.on(
      'connect',
      (req, socket: Socket, head) => void this.tunnel(sandboxId, endpoint, req, socket, head),
    );
    endpoint.server.on('clientError', (_error, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      endpoint.server.once('error', reject);
      endpoint.server.listen(socketPath, () => resolve());
    });
    // The sandbox runs as another uid: it must be able to connect (the directory, 0700 and owned by
    // that uid, keeps every other sandbox out).
    await chmod(socketPath, 0o666);
    this.endpoints.set(sandboxId, endpoint);
  }

  /** From now on, connections through the sandbox's socket belong to `call`. */
  bind(sandboxId: string, call: EgressCall): void {
    const endpoint = this.endpoints.get(sandboxId);
    if (endpoint !== undefined) endpoint.call = call;
  }

  /** Between calls nothing may connect: a process left running in the sandbox is refused. */
  unbind(sandboxId: string): void {
    const endpoint = this.endpoints.get(sandboxId);
    if (endpoint !== undefined) endpoint.call = undefined;
  }

  async close(sandboxId: string): Promise<void> {
    const endpoint = this.endpoints.get(sandboxId);
    if (endpoint === undefined) return;
    this.endpoints.delete(sandboxId);
    endpoint.server.closeAllConnections();
    await new Promise<void>((resolve) => endpoint.server.close(() => resolve()));
    await rm(endpoint.socketPath, { force: true });
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.endpoints.keys()].map((id) => this.close(id)));
  }

  /**
   * The rule and address for `host:port` under the current call, or Refused with the reason. The
   * name is resolved here, not by the sandbox, and the address checked after.
   */
  private async decide(
    call: EgressCall | undefined,
    host: string,
    port: number,
  ): Promise<{ rule: EgressRule; address: string }> {
    if (call === undefined) throw new Refused('no call of the sandbox is running');
    const rule = matchRule(call.rules, host, port);
    if (rule === undefined) throw new Refused('not in the allowlist');
    const narrowed = narrowingRefusal(call.narrowings ?? [], host, port);
    if (narrowed !== undefined) throw new Refused(narrowed);
    let address = host;
    if (isIP(host) === 0) {
      const timeout = AbortSignal.timeout(RESOLVE_TIMEOUT_MS);
      const found = await Promise.race([
        lookup(host, { all: true }),
        new Promise<never>((_, reject) =>
          timeout.addEventListener('abort', () => reject(new Refused('name resolution timed out'))),
        ),
      ]).catch((error: unknown) => {
        throw error instanceof Refused ? error : new Refused('name did not resolve');
      });
      // Every address must pass, or a name with one public and one private address could be steered.
      const bad = found.find((a) => !addressAllowed(rule, a.address));
      if (bad !== undefined) throw new Refused(`resolves to non-public address ${bad.address}`);
      address = found[0]!.address;
    } else if (!addressAllowed(rule, host)) {
      throw new Refused('non-public address not named by the rule');
    }
    return { rule, address };
  }

  private record(
    sandboxId: string,
    call: EgressCall | undefined,
    fields: Omit<EgressRecord, 'tenantId' | 'runId' | 'executionId' | 'sandboxId' | 'service'>,
  ): void {
    // Outside any call there is no run to file it under: such connections are refused unrecorded.
    if (call === undefined) return;
    this.options.onRecord({
      tenantId: call.tenantId,
      runId: call.runId,
      executionId: call.executionId ?? null,
      sandboxId,
      service: call.service ?? null,
      ...fields,
    });
  }

  private async tunnel(
    sandboxId: string,
    endpoint: Endpoint,
    req: IncomingMessage,
    client: Socket,
    head: Buffer,
  ): Promise<void> {
    const call = endpoint.call;
    const target = parseAuthority(req.url ?? '');
    const destination =
      target === undefined ? String(req.url) : destinationOf(target.host, target.port);
    const base = { kind: 'connect' as const, destination, injected: [] };
    client.on('error', () => undefined);
    if (target === undefined) {
      client.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      this.record(sandboxId, call, {
        ...base,
        address: null,
        verdict: 'denied',
        reason: 'bad CONNECT target',
        bytesSent: 0,
        bytesReceived: 0,
      });
      return;
    }
    let address: string;
    try {
      ({ address } = await this.decide(call, target.host, target.port));
    } catch (error) {
      const reason = error instanceof Refused ? error.message : 'refused';
      client.end(
        `HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-type: text/plain\r\n\r\nkeel egress: ${destination} denied: ${reason}\n`,
      );
      this.record(sandboxId, call, {
        ...base,
        address: null,
        verdict: 'denied',
        reason,
        bytesSent: 0,
        bytesReceived: 0,
      });
      return;
    }
    const upstream = connect({ host: address, port: target.port, timeout: CONNECT_TIMEOUT_MS });
    let failure: string | null = null;
    upstream.once('connect', () => {
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once('timeout', () => upstream.destroy(new Error('connect timed out')));
    upstream.on('error', (error) => {
      failure ??= error.message;
      if (!client.writableEnded && upstream.bytesRead === 0 && upstream.bytesWritten === 0)
        client.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n');
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.once('close', () => {
      client.destroy();
      this.record(sandboxId, call, {
        ...base,
        address,
        verdict: 'allowed',
        reason: failure,
        bytesSent: upstream.bytesWritten,
        bytesReceived: upstream.bytesRead,
      });
    });
  }

  private async forward(
    sandboxId: string,
    endpoint: Endpoint,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const call = endpoint.call;
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = undefined;
    }
    if (url === undefined || url.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' });
      res.end('keel egress: send absolute http:// URLs here, and use CONNECT for https\n');
      this.record(sandboxId, call, {
        kind: 'http',
        destination: String(req.url).slice(0, 200),
        address: null,
        verdict: 'denied',
        reason: 'not an absolute http URL',
        bytesSent: 0,
        bytesReceived: 0,
        injected: [],
      });
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = url.port === '' ? 80 : Number(url.port);
    const destination = destinationOf(host, port);
    let decided: { rule: EgressRule; address: string };
    try {
      decided = await this.decide(call, host, port);
    } catch (error) {
      const reason = error instanceof Refused ? error.message : 'refused';
      res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`keel egress: ${destination} denied: ${reason}\n`);
      this.record(sandboxId, call, {
        kind: 'http',
        destination,
        address: null,
        verdict: 'denied',
        reason,
        bytesSent: 0,
        bytesReceived: 0,
        injected: [],
      });
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !DROPPED_HEADERS.has(name)) headers[name] = value;
    headers.host = url.host;
    headers.connection = 'close';
    const injected: string[] = [];
    const inject = decided.rule.inject;
    if (inject !== undefined && call !== undefined) {
      try {
        const value = await this.options.revealSecret(call.tenantId, inject.secret, {
          runId: call.runId,
          executionId: call.executionId ?? null,
          via: 'header',
          destination,
        });
        headers[inject.header.toLowerCase()] = inject.format.replaceAll('{secret}', value);
        injected.push(inject.secret);
      } catch (error) {
        res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' });
        res.end(
          `keel egress: the credential for ${destination} is unavailable (${(error as { code?: string }).code ?? 'error'})\n`,
        );
        this.record(sandboxId, call, {
          kind: 'http',
          destination,
          address: decided.address,
          verdict: 'denied',
          reason: `credential ${inject.secret} unavailable`,
          bytesSent: 0,
          bytesReceived: 0,
          injected: [],
        });
        return;
      }
    }
    // Bytes on the wire to and from the destination (request and response heads included).
    let wire: Socket | undefined;
    let failure: string | null = null;
    let recorded = false;
    const finish = () => {
      if (recorded) return;
      recorded = true;
      this.record(sandboxId, call, {
        kind: 'http',
        destination,
        address: decided.address,
        verdict: 'allowed',
        reason: failure,
        bytesSent: wire?.bytesWritten ?? 0,
        bytesReceived: wire?.bytesRead ?? 0,
        injected,
      });
    };
    const upstream = httpRequest({
      host: decided.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent: false,
      timeout: CONNECT_TIMEOUT_MS,
    });
    upstream.on('socket', (socket) => (wire = socket));
    upstream.on('response', (answer) => {
      upstream.setTimeout(0);
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers))
        if (value !== undefined && !DROPPED_HEADERS.has(name)) out[name] = value;
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, out);
      answer.pipe(res);
      res.on('finish', finish);
      answer.on('error', (error) => {
        failure ??= error.message;
        finish();
      });
    });
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.on('error', (error) => {
      failure ??= error.message;
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' });
        res.end(`keel egress: ${destination} failed: ${error.message}\n`);
      } else res.destroy();
      finish();
    });
    res.on('close', finish);
    req.pipe(upstream);
  }
}

/** `host:port` of a CONNECT request (IPv6 in brackets), or undefined. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(authority);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: (match[1] ?? match[2])!, port };
}
