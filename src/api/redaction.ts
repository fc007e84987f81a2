// Applies a tenant's redaction policy to what the API is about to send: run inputs and results, and
// step inputs and outputs. Works on copies of the values the store returned, so the journal (which
// replay reads) keeps every value; nothing leaves through the runs and steps routes without
// passing here.
import type { Json } from '../domain/json.ts';
import { REDACTED_VALUE, type RedactionPolicy } from '../domain/redaction-policy.ts';

/** Path roots a tool rule may start with; `args` and `result` are the journal's names for them. */
const ROOTS: Record<string, 'input' | 'output'> = {
  input: 'input',
  output: 'output',
  args: 'input',
  result: 'output',
};

const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A copy of `value` with the value of every key in `keys` (lower case) replaced. */
function redactKeys(value: Json, keys: ReadonlySet<string>): Json {
  if (Array.isArray(value)) return value.map((item) => redactKeys(item, keys));
  if (!isObject(value)) return value;
  const copy: { [key: string]: Json } = {};
  for (const [key, item] of Object.entries(value))
    copy[key] = keys.has(key.toLowerCase()) ? REDACTED_VALUE : redactKeys(item, keys);
  return copy;
}

/** A copy of `value` with what `path` reaches replaced (`*` matches any key or index). */
function redactPath(value: Json, path: readonly string[]): Json {
  const [head, ...rest] = path;
  if (head === undefined) return REDACTED_VALUE;
  if (Array.isArray(value))
    return value.map((item, i) =>
      head === '*' || head === String(i) ? redactPath(item, rest) : item,
    );
  if (!isObject(value)) return value;
  const copy: { [key: string]: Json } = {};
  for (const [key, item] of Object.entries(value))
    copy[key] = head === '*' || head === key ? redactPath(item, rest) : item;
  return copy;
}

/**
 * A model step's value with the `input` rules of each called tool applied to that call's `args` (in
 * `toolCalls` of the response and of the assistant messages of the request).
 */
function redactToolCalls(value: Json, policy: RedactionPolicy): Json {
  if (Object.keys(policy.tools).length === 0) return value;
  const calls = (list: Json | undefined): Json | undefined =>
    !Array.isArray(list)
      ? list
      : list.map((call) => {
          const rules =
            isObject(call) && typeof call.name === 'string' ? policy.tools[call.name] : undefined;
          if (!isObject(call) || rules === undefined || call.args === undefined) return call;
          let args = call.args;
          for (const rule of rules) {
            const [root = '', ...path] = rule.split('.');
            if (ROOTS[root] === 'input') args = redactPath(args, path);
          }
          return { ...call, args };
        });
  if (!isObject(value)) return value;
  const copy = { ...value };
  if (copy.toolCalls !== undefined) copy.toolCalls = calls(copy.toolCalls) ?? null;
  if (Array.isArray(copy.messages))
    copy.messages = copy.messages.map((message) =>
      isObject(message) && message.toolCalls !== undefined
        ? { ...message, toolCalls: calls(message.toolCalls) ?? null }
        : message,
    );
  return copy;
}

/** The policy's field rule for one value (a run's input or result): keys redacted anywhere. */
export function redactValue(value: Json, policy: RedactionPolicy): Json {
  if (policy.fields.length === 0) return value;
  return redactKeys(value, new Set(policy.fields.map((field) => field.toLowerCase())));
}

/**
 * A step's input and output under the policy: the field rule everywhere, and for a tool step the
 * rules listed under its tool name.
 */
export function redactStepIo<T extends { input?: Json; output?: Json }>(
  io: T,
  step: { kind: string; name: string },
  policy: RedactionPolicy,
): T {
  const redacted: T = { ...io };
  for (const side of ['input', 'output'] as const) {
    const value = redacted[side];
    if (value !== undefined) redacted[side] = redactValue(value, policy);
  }
  if (step.kind === 'model') {
    // The model proposes the calls whose arguments the tool rules hide: hide them here too.
    if (redacted.output !== undefined) redacted.output = redactToolCalls(redacted.output, policy);
    if (redacted.input !== undefined) redacted.input = redactToolCalls(redacted.input, policy);
  }
  const rules = step.kind === 'tool' ? (policy.tools[step.name] ?? []) : [];
  for (const rule of rules) {
    const [root = '', ...path] = rule.split('.');
    const side = ROOTS[root];
    const value = side === undefined ? undefined : redacted[side];
    if (side !== undefined && value !== undefined) redacted[side] = redactPath(value, path);
  }
  return redacted;
}

/** A run view with the policy's field rule applied to its input and result. */
export function redactRunView<T extends { input: unknown; result?: unknown }>(
  view: T,
  policy: RedactionPolicy,
): T {
  if (policy.fields.length === 0) return view;
  return {
    ...view,
    input: redactValue(view.input as Json, policy),
    ...(view.result === undefined ? {} : { result: redactValue(view.result as Json, policy) }),
  };
}

/** An event view with the field rule applied to the run result it may carry (`run.succeeded`). */
export function redactEventView<T extends { data: unknown }>(view: T, policy: RedactionPolicy): T {
  if (
    policy.fields.length === 0 ||
    !isObject(view.data as Json) ||
    !('result' in (view.data as object))
  )
    return view;
  const data = view.data as { [key: string]: Json };
  return { ...view, data: { ...data, result: redactValue(data.result ?? null, policy) } };
}
