// Writing and reading one large payload through the store's chunk procedures. A value is serialized
// once; its JSON text is then hashed and written slice by slice (each slice encoded to UTF-8 on its
// own, then dropped), so beyond the value and its JSON text at most one chunk's bytes are alive.
// Reading verifies the sha256 while it streams, so a corrupt or truncated payload is never returned.
import { createHash } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { KeelError } from '../domain/keel-error.ts';
import { PAYLOAD_MEDIA_TYPE, type PayloadInfo } from '../domain/payload-ref.ts';
import type { Store } from './store.ts';

/** UTF-16 code units per chunk: at most 1.5 MiB of UTF-8 (3 bytes per unit), 512 KiB for ASCII. */
export const PAYLOAD_CHUNK_CHARS = 512 * 1024;

/** Slices of `text`, never splitting a surrogate pair, so each encodes to UTF-8 on its own. */
function* slices(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + PAYLOAD_CHUNK_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    yield text.slice(start, end);
    start = end;
  }
}

/** The payload `text` would be stored as: its sha256, UTF-8 size and chunk count. */
export function describeText(text: string): PayloadInfo {
  const hash = createHash('sha256');
  let size = 0;
  let chunks = 0;
  for (const slice of slices(text)) {
    hash.update(slice, 'utf8'); // encoded inside the hash: no buffer per slice
    size += Buffer.byteLength(slice, 'utf8');
    chunks += 1;
  }
  return { sha256: hash.digest('hex'), size, mediaType: PAYLOAD_MEDIA_TYPE, chunks };
}

/**
 * Stores `text` (unless its payload is stored already: one copy per content) and records that
 * `runId` references it. A chunk collected between upload and seal (`payload_incomplete`) is
 * written again once.
 */
export async function writePayload(
  store: Store,
  runId: string,
  text: string,
  info: PayloadInfo,
  runMaxBytes: number,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0 || (await store.getPayload(info.sha256)) === null) {
      let seq = 0;
      for (const slice of slices(text))
        await store.putPayloadChunk(info.sha256, seq++, Buffer.from(slice, 'utf8'));
    }
    try {
      await store.sealPayload(runId, info, runMaxBytes);
      return;
    } catch (error) {
      if (attempt > 0 || !(error instanceof KeelError) || error.code !== 'payload_incomplete')
        throw error;
    }
  }
}

/** The payload's chunks in order, each checked against the sha256 once all are read. */
export async function* payloadChunks(store: Store, info: PayloadInfo): AsyncGenerator<Uint8Array> {
  const hash = createHash('sha256');
  for (let seq = 0; seq < info.chunks; seq++) {
    const chunk = await store.readPayloadChunk(info.sha256, seq);
    if (chunk === null) throw new Error(`payload ${info.sha256} lacks chunk ${seq}`);
    hash.update(chunk);
    yield chunk;
  }
  if (hash.digest('hex') !== info.sha256) throw new Error(`payload ${info.sha256} is corrupt`);
}

/** The payload's JSON text, read chunk by chunk (no whole-payload buffer besides the text). */
export async function readPayloadText(store: Store, sha256: string): Promise<string> {
  const info = await store.getPayload(sha256);
  if (info === null) throw new KeelError('payload_not_found', `payload ${sha256} is not stored`);
  const decoder = new StringDecoder('utf8');
  const parts: string[] = [];
  for await (const chunk of payloadChunks(store, info))
    parts.push(decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
  parts.push(decoder.end());
  return parts.join('');
}
