// What a step received and returned, as `GET /v1/runs/:id/steps` shows it: the journal's `args` and
// `result` read per effect kind (a model call as its request and response, a tool as its arguments
// and result, `exec` as exit code and output), redacted by the tenant's policy, then cut to a
// preview when large. Reads journal entries only; never writes, never changes what replay reads.
import { STEP_PREVIEW_MAX_BYTES_DEFAULT } from '../config/defaults.ts';
import type { Json } from '../domain/json.ts';
import type { RedactionPolicy } from '../domain/redaction-policy.ts';
import type { JournalEntry } from '../domain/records.ts';
import { redactStepIo } from './redaction.ts';

/**
 * Largest JSON (bytes, UTF-8) of a step's input or output in the steps list by default
 * (KEEL_STEP_PREVIEW_MAX_BYTES); past it the list holds a preview and
 * `inputTruncated`/`outputTruncated`, and `GET /v1/runs/:id/steps/:seq` the whole.
 */
export const STEP_IO_PREVIEW_MAX_BYTES = STEP_PREVIEW_MAX_BYTES_DEFAULT;
/** Successive preview shapes, each smaller: longest string kept, items kept of a long array. */
const PREVIEW_LEVELS = [
  { chars: 2048, items: 40 },
  { chars: 512, items: 20 },
  { chars: 128, items: 8 },
  { chars: 32, items: 4 },
] as const;

type JsonObject = { [key: string]: Json };
const isObject = (value: Json | null | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The step's input and output, before redaction and truncation; a side is absent when it has none. */
export function stepIo(entry: JournalEntry): { input?: Json; output?: Json } {
  if (entry.kind === 'model') return modelIo(entry);
  const args = entry.args;
  // A parked effect keeps why it waits in args (pool full, budget spent): that is no input.
  const waitMarker = isObject(args) && 'waitingReason' in args;
  return {
    ...(args === null || waitMarker ? {} : { input: args }),
    ...(entry.status === 'succeeded' ? { output: entry.result } : {}),
  };
}

/**
 * A model call: input `{ model, messages, tools?, maxOutputTokens?, temperature? }` (journaled since
 * issue 17; older entries have none), output `{ content, toolCalls?, usage, model }`.
 */
function modelIo(entry: JournalEntry): { input?: Json; output?: Json } {
  const request = isObject(entry.args) ? entry.args.request : undefined;
  const input = isObject(request) ? { model: entry.name, ...request } : undefined;
  const response = entry.status === 'succeeded' ? entry.result : null;
  if (!isObject(response)) return input === undefined ? {} : { input };
  const { text, toolCalls, usage, model } = response;
  const output: JsonObject = { content: text ?? null };
  if (Array.isArray(toolCalls) && toolCalls.length > 0) output.toolCalls = toolCalls;
  if (usage !== undefined) output.usage = usage;
  if (model !== undefined) output.model = model;
  return { ...(input === undefined ? {} : { input }), output };
}

const bytes = (value: Json): number => Buffer.byteLength(JSON.stringify(value));

/** A copy with strings cut to `chars` and arrays and objects to `items` (head and tail kept). */
function shrink(value: Json, chars: number, items: number): Json {
  if (typeof value === 'string')
    return value.length <= chars
      ? value
      : `${value.slice(0, chars)}…[${value.length - chars} more chars]`;
  if (Array.isArray(value)) {
    const kept = value.map((item) => shrink(item, chars, items));
    if (kept.length <= items) return kept;
    const head = Math.ceil(items / 2);
    const tail = items - head;
    return [
      ...kept.slice(0, head),
      `…[${kept.length - items} more items]`,
      ...(tail === 0 ? [] : kept.slice(-tail)),
    ];
  }
  if (!isObject(value)) return value;
  const entries = Object.entries(value);
  const copy: JsonObject = {};
  for (const [key, item] of entries.slice(0, items)) copy[key] = shrink(item, chars, items);
  if (entries.length > items) copy['…'] = `[${entries.length - items} more keys]`;
  return copy;
}

/**
 * `value` itself when its JSON fits `maxBytes`, else a smaller JSON preview of it (long strings and
 * arrays cut with a marker saying how much is left out; as a last resort the start of its JSON text).
 */
export function preview(value: Json, maxBytes: number): { value: Json; truncated: boolean } {
  if (bytes(value) <= maxBytes) return { value, truncated: false };
  for (const level of PREVIEW_LEVELS) {
    const shrunk = shrink(value, level.chars, level.items);
    if (bytes(shrunk) <= maxBytes) return { value: shrunk, truncated: true };
  }
  const text = JSON.stringify(value);
  // Escaping and UTF-8 make a character 1 to 6 bytes of JSON: halve the cut until it fits.
  for (let chars = maxBytes; ; chars = Math.floor(chars / 2)) {
    const cut = `${text.slice(0, chars)}…`;
    if (chars === 0 || bytes(cut) <= maxBytes) return { value: cut, truncated: true };
  }
}

export interface StepIoOptions {
  policy: RedactionPolicy;
  /** Cut each side to a preview past this many bytes; undefined: whole values. */
  maxBytes: number | undefined;
}

/**
 * The step fields this module adds to a step view: `input`/`output` (absent when none) and their
 * truncation flags.
 */
export function stepIoFields(
  entry: JournalEntry,
  options: StepIoOptions,
): { input?: Json; output?: Json; inputTruncated: boolean; outputTruncated: boolean } {
  const io = redactStepIo(stepIo(entry), entry, options.policy);
  const fields: { input?: Json; output?: Json; inputTruncated: boolean; outputTruncated: boolean } =
    { inputTruncated: false, outputTruncated: false };
  for (const side of ['input', 'output'] as const) {
    const value = io[side];
    if (value === undefined) continue;
    const shown =
      options.maxBytes === undefined
        ? { value, truncated: false }
        : preview(value, options.maxBytes);
    fields[side] = shown.value;
    fields[side === 'input' ? 'inputTruncated' : 'outputTruncated'] = shown.truncated;
  }
  return fields;
}
