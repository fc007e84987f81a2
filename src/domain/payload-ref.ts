// A reference to a large payload (issue 22): what a journal or run row holds instead of a value whose
// JSON is larger than the inline threshold. The value itself is stored once, content-addressed by the
// sha256 of its UTF-8 JSON. A value whose shape is a reference is always stored as a payload (never
// inline), so a row's top-level value that reads as a reference always is one.
import type { Json } from './json.ts';

/** The key a stored reference is written under: `{ "$keelPayload": { sha256, size, mediaType } }`. */
export const PAYLOAD_REF_KEY = '$keelPayload';
/** The media type of every journaled payload: the value's JSON text. */
export const PAYLOAD_MEDIA_TYPE = 'application/json';

export interface PayloadInfo {
  /** The sha256 (hex) of the payload's bytes. */
  sha256: string;
  /** Its size in bytes. */
  size: number;
  mediaType: string;
  /** How many chunks it is stored in (seq 0..chunks-1). */
  chunks: number;
}

export interface PayloadRef {
  sha256: string;
  size: number;
  mediaType: string;
}

export function payloadRefValue(ref: PayloadRef): Json {
  return { [PAYLOAD_REF_KEY]: { sha256: ref.sha256, size: ref.size, mediaType: ref.mediaType } };
}

/** The reference a top-level value is, or undefined for an ordinary value. */
export function asPayloadRef(value: unknown): PayloadRef | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== PAYLOAD_REF_KEY) return undefined;
  const ref = (value as Record<string, unknown>)[PAYLOAD_REF_KEY];
  if (ref === null || typeof ref !== 'object') return undefined;
  const { sha256, size, mediaType } = ref as Record<string, unknown>;
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  if (typeof size !== 'number' || typeof mediaType !== 'string') return undefined;
  return { sha256, size, mediaType };
}

/** Whether a value looks like a reference (anywhere a reference could be read back as one). */
export const looksLikePayloadRef = (value: unknown): boolean =>
  value !== null &&
  typeof value === 'object' &&
  !Array.isArray(value) &&
  Object.hasOwn(value as object, PAYLOAD_REF_KEY);

/**
 * JSON larger than this (a run input or output, an effect's arguments or result) is stored once as
 * a content-addressed payload and referenced from its row (KEEL_PAYLOAD_INLINE_MAX_BYTES).
 */
export const PAYLOAD_INLINE_MAX_BYTES_DEFAULT = 64 * 1024;
/** Largest payload stored: beyond it, `result_too_large` (KEEL_PAYLOAD_STORED_MAX_BYTES). */
export const PAYLOAD_STORED_MAX_BYTES_DEFAULT = 128 * 1024 * 1024;
/** Most payload bytes one run references: beyond, `run_payloads_too_large` (KEEL_RUN_PAYLOAD_MAX_BYTES). */
export const RUN_PAYLOAD_MAX_BYTES_DEFAULT = 1024 * 1024 * 1024;
