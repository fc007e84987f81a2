// Converts what agent code passes as `tools` (tool definitions with zod schemas, or plain specs)
// into the JSON-Schema form providers send to a model. It must never run a tool or see a provider's
// wire format.
import { z } from 'zod';
import { isToolDefinition } from '../sdk/define.ts';
import type { ModelToolSpec, ToolDefinition } from '../sdk/types.ts';

// Tool definitions are frozen and reused on every loop step; converting each schema once saves the
// rework. Cached specs are shared between calls, so providers must treat them as read-only.
// biome-ignore lint/suspicious/noExplicitAny: one cache for tools of every input and output type; a spec depends on the schema only.
const specCache = new WeakMap<ToolDefinition<any, any>, ModelToolSpec>();

/**
 * Returns the model-facing spec of a tool: name, description and the JSON Schema of its arguments.
 * Schemas describe the tool's *input* side (before defaults and transforms); parts JSON Schema
 * cannot express (dates, custom checks) become unconstrained rather than failing the call.
 * @example
 * toModelToolSpec(add);
 * // { name: 'add', description: 'Adds two numbers',
 * //   parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } }
 */
// biome-ignore lint/suspicious/noExplicitAny: accepts a tool of any input and output type, like the cache above.
export function toModelToolSpec(tool: ToolDefinition<any, any> | ModelToolSpec): ModelToolSpec {
  if (!isToolDefinition(tool)) {
    const plain = tool as ModelToolSpec;
    return { name: plain.name, description: plain.description, parameters: plain.parameters };
  }
  const cached = specCache.get(tool);
  if (cached !== undefined) return cached;
  // `$schema` names the draft; providers neither need nor always accept it.
  const { $schema: _draft, ...parameters } = z.toJSONSchema(tool.input, {
    io: 'input',
    unrepresentable: 'any',
  });
  const spec: ModelToolSpec = Object.freeze({
    name: tool.name,
    description: tool.description,
    parameters,
  });
  specCache.set(tool, spec);
  return spec;
}
