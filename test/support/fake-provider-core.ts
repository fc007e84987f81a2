// Shared core of the fake model-provider servers: a real node:http server on loopback that records
// requests and answers each one with a behaviour (a reply, an error status with headers, a hang, a
// malformed body) chosen by the test, either queued one-shot or by a default function. The wire
// format itself lives in the per-protocol files.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface FakeReply {
  kind: 'reply';
  text?: string;
  toolCalls?: Array<{ name: string; args: Record<string, unknown> }>;
  /** Usage to report; by default estimated from the request (chars ÷ 4) and the reply. */
  inputTokens?: number;
  outputTokens?: number;
  cachedTokens?: number;
  /** Delay before the first byte. */
  delayMs?: number;
  /** Split streamed text into pieces of this many characters (default 4). */
  chunkChars?: number;
  /**
   * Streamed replies only: cut the connection after this many text pieces (a provider dying
   * mid-stream).
   */
  dropAfterPieces?: number;
  /**
   * Streamed replies only: after this many text pieces, wait for `until` before sending the rest
   * (a test looks at the half-streamed answer, with no timing involved).
   */
  hold?: { afterPieces: number; until: Promise<void> };
}

export type FakeBehaviour =
  | FakeReply
  | {
      kind: 'status';
      status: number;
      message?: string;
      headers?: Record<string, string>;
      errorType?: string;
      errorCode?: string;
    }
  | { kind: 'hang' }
  | { kind: 'malformed' };

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  at: number;
}

export interface Protocol {
  /** Writes a reply in the protocol's format (JSON or SSE, as the request asked). */
  reply(res: ServerResponse, body: any, reply: FakeReply, id: number): Promise<void>;
  error(res: ServerResponse, behaviour: Extract<FakeBehaviour, { kind: 'status' }>): void;
  /** Estimated input tokens of a request body. */
  inputTokens(body: any): number;
  path: string;
}

export interface FakeProviderServer {
  url: string;
  requests: RecordedRequest[];
  /** Queues one-shot behaviours, used in order before the default. */
  enqueue(...behaviours: FakeBehaviour[]): void;
  /** The behaviour for requests when the queue is empty. */
  setDefault(fn: (body: any, index: number) => FakeBehaviour): void;
  /** Requests received so far that are still open (hanging or in progress). */
  readonly open: number;
  close(): Promise<void>;
}

export interface FakeServerOptions {
  /**
   * Emulates a prompt cache: the server remembers every message prefix it served; a request's
   * uncached tokens delay its first byte by this many ms per thousand tokens, and its cached tokens
   * are reported in usage.
   */
  prefillMsPerKTok?: number;
}

export async function startFakeProvider(
  protocol: Protocol,
  initial: (body: any, index: number) => FakeBehaviour,
  options: FakeServerOptions = {},
): Promise<FakeProviderServer> {
  const queue: FakeBehaviour[] = [];
  const seenPrefixes = new Set<string>();
  let fallback = initial;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  let open = 0;
  let count = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      open += 1;
      res.once('close', () => (open -= 1));
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"error":{"message":"bad json"}}');
        return;
      }
      const index = count++;
      requests.push({ path: req.url ?? '', headers: req.headers, body, at: Date.now() });
      if (req.url?.split('?')[0] !== protocol.path) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":{"message":"no such path"}}');
        return;
      }
      let behaviour = queue.shift() ?? fallback(body, index);
      if (options.prefillMsPerKTok !== undefined && behaviour.kind === 'reply')
        behaviour = withPrefill(behaviour, body, seenPrefixes, options.prefillMsPerKTok);
      void respond(protocol, res, body, behaviour, index);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    enqueue: (...behaviours) => queue.push(...behaviours),
    setDefault: (fn) => (fallback = fn),
    get open() {
      return open;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function respond(
  protocol: Protocol,
  res: ServerResponse,
  body: any,
  behaviour: FakeBehaviour,
  index: number,
): Promise<void> {
  switch (behaviour.kind) {
    case 'hang':
      return; // never answers; the client's timeout or abort must end it
    case 'malformed':
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"id": "broken", "choices": [');
      return;
    case 'status':
      protocol.error(res, behaviour);
      return;
    case 'reply':
      if (behaviour.delayMs !== undefined)
        await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
      if (res.destroyed) return;
      await protocol.reply(res, body, behaviour, index);
      return;
    default: {
      const unreachable: never = behaviour;
      return unreachable;
    }
  }
}

function withPrefill(reply: FakeReply, body: any, seen: Set<string>, msPerKTok: number): FakeReply {
  const messages: unknown[] = body.messages ?? [];
  const head = JSON.stringify([body.system ?? null, body.tools ?? null]);
  let cachedChars = 0;
  let totalChars = head.length;
  for (let i = 0; i < messages.length; i += 1) {
    const prefix = head + JSON.stringify(messages.slice(0, i + 1));
    totalChars = prefix.length;
    if (seen.has(prefix)) cachedChars = prefix.length;
    seen.add(prefix);
  }
  const cachedTokens = cachedChars === 0 ? 0 : estimate(cachedChars);
  const inputTokens = estimate(totalChars);
  return {
    ...reply,
    cachedTokens: reply.cachedTokens ?? cachedTokens,
    inputTokens: reply.inputTokens ?? inputTokens,
    delayMs: (reply.delayMs ?? 0) + ((inputTokens - cachedTokens) * msPerKTok) / 1_000,
  };
}

/** Splits `text` into pieces of `size` characters (at least one piece, possibly empty). */
export function pieces(text: string, size: number): string[] {
  if (text === '') return [];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function estimate(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}
