// A sandbox node's call listener: POST /v1/calls from placers, each checked against the node
// token's HMAC (node-call.ts), admitted only while fewer calls than its slots run (else 503
// `node_refused`, which sends the placer to its next candidate) and only while the node is not
// draining or stopping; then run by the node's own SandboxManager exactly as a local call is
// (sandbox-call.ts). A placer that goes away (its connection closes) aborts its call. Plain
// node:http rather than Fastify: one route whose raw body is what the signature covers.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isKeelError } from '../domain/keel-error.ts';
import { defineSandboxProfile, type SandboxProfileInput } from '../sandbox/profile.ts';
import { runSandboxCall } from '../sandbox/sandbox-call.ts';
import type { SandboxManager } from '../sandbox/sandbox-manager.ts';
import {
  NODE_CALL_PATH,
  NODE_SIGNATURE_HEADER,
  NODE_TIME_HEADER,
  NodeCallSchema,
  verifyNodeCall,
} from './node-call.ts';

/** Largest call body a node reads (arguments are bounded by the tools well below this). */
const NODE_CALL_BODY_MAX_BYTES = 80 * 1024 * 1024;

export interface NodeServerOptions {
  tokenHash: string;
  slots: number;
  manager: () => SandboxManager;
  /** Whether the node takes new calls (false while draining or stopping). */
  accepting: () => boolean;
  /** Told of each call as it is admitted or refused (the node logs them). */
  onCall?: (event: { executionId: string; runId: string; admitted: boolean }) => void;
}

export class NodeServer {
  readonly #options: NodeServerOptions;
  readonly #server: Server;
  #active = 0;

  constructor(options: NodeServerOptions) {
    this.#options = options;
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) =>
        reply(response, 500, { error: { code: 'internal_error', message: String(error) } }),
      );
    });
  }

  /** Calls running now (the load the node heartbeats). */
  get active(): number {
    return this.#active;
  }

  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => resolve());
    });
    return (this.#server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST' || request.url !== NODE_CALL_PATH)
      return reply(response, 404, { error: { code: 'not_found', message: 'no such route' } });
    const body = await readBody(request);
    if (body === undefined)
      return reply(response, 413, {
        error: { code: 'payload_too_large', message: 'call too large' },
      });
    const signed = verifyNodeCall(
      this.#options.tokenHash,
      {
        time: header(request, NODE_TIME_HEADER),
        signature: header(request, NODE_SIGNATURE_HEADER),
      },
      body,
      Date.now(),
    );
    if (!signed)
      return reply(response, 401, {
        error: {
          code: 'node_token_invalid',
          message: 'the call is not signed with this node’s token',
        },
      });
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return reply(response, 400, {
        error: { code: 'invalid_json', message: 'the call is not JSON' },
      });
    }
    const parsed = NodeCallSchema.safeParse(json);
    if (!parsed.success)
      return reply(response, 400, {
        error: { code: 'validation_failed', message: parsed.error.message },
      });
    // Admission by the node's real capacity: the placer's view is stale, this count is not.
    const admitted = this.#options.accepting() && this.#active < this.#options.slots;
    this.#options.onCall?.({
      executionId: parsed.data.executionId,
      runId: parsed.data.runId,
      admitted,
    });
    if (!admitted)
      return reply(response, 503, {
        error: {
          code: 'node_refused',
          message: this.#options.accepting()
            ? `node at capacity (${this.#active}/${this.#options.slots} calls)`
            : 'node draining or stopping',
          retryable: true,
        },
      });
    this.#active++;
    const placerGone = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) placerGone.abort();
    });
    try {
      const call = parsed.data;
      const outcome = await runSandboxCall(this.#options.manager(), {
        ...call,
        profile: defineSandboxProfile(call.profile as SandboxProfileInput),
        signal: placerGone.signal,
      });
      reply(response, 200, outcome);
    } catch (error) {
      reply(response, isKeelError(error) ? 422 : 500, {
        error: isKeelError(error)
          ? { code: error.code, message: error.message, retryable: error.retryable }
          : {
              code: 'internal_error',
              message: error instanceof Error ? error.message : String(error),
            },
      });
    } finally {
      this.#active--;
    }
  }
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > NODE_CALL_BODY_MAX_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
