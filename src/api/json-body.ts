// Reads and parses JSON request bodies with a size limit. An oversize body is drained (up to a
// bound) before the 413 is sent: answering while the client is still uploading makes most HTTP
// clients report a broken pipe instead of the 413. Past the drain bound the connection is closed:
// refusing a flood beats reading it. A `__proto__` key or a `constructor.prototype` member anywhere
// in the body is refused (`forbidden_key`), never stripped: a body the server silently changed
// would be stored and hashed (idempotency) differently from what the client sent.
import type { IncomingMessage } from 'node:http';
import secureJson from 'secure-json-parse';
import { KeelError } from '../domain/keel-error.ts';

/** How much of an oversize body is read and discarded so the client sees the 413, per request. */
export const PAYLOAD_DRAIN_MAX_BYTES = 32 * 1024 * 1024;

export async function readJsonBody(stream: IncomingMessage, limitBytes: number): Promise<unknown> {
  const tooLarge = () =>
    new KeelError('payload_too_large', `the request body exceeds ${limitBytes} bytes`, {
      details: { limitBytes },
    });
  const declared = Number(stream.headers['content-length']);
  if (Number.isFinite(declared) && declared > PAYLOAD_DRAIN_MAX_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > PAYLOAD_DRAIN_MAX_BYTES) break;
    if (size <= limitBytes) chunks.push(chunk);
  }
  if (size > limitBytes) throw tooLarge();
  const text = Buffer.concat(chunks, size).toString('utf8');
  if (text.trim() === '') return {}; // an empty body is an empty object (POST /cancel without a body)
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    // Parsed again only on this failure path, to tell a refused key in valid JSON from JSON that
    // does not parse.
    if (!isJson(text)) throw new KeelError('invalid_json', 'the request body is not valid JSON');
    throw new KeelError(
      'forbidden_key',
      'the request body has a "__proto__" key or a "constructor": {"prototype": …} member; rename or remove it',
    );
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
