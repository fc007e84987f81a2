// A tenant's redaction policy: which values of its runs' inputs, results and step inputs/outputs
// the API and CLI show as "[redacted]". Stored on the tenant; applied only when a value leaves the
// store through the API, never to what the journal keeps for replay. No behaviour lives here.

/**
 * `fields`: object keys whose values are redacted wherever they appear (case-insensitive), in run
 * inputs and results and in every step's input and output. `tools`: tool name → paths into that
 * tool's step, each starting with `input` or `output` (`input.body`, `output.token`,
 * `input.headers.*`; `*` matches any key or array index; `input` alone redacts the whole input).
 */
export interface RedactionPolicy {
  fields: string[];
  tools: Record<string, string[]>;
}

export const EMPTY_REDACTION_POLICY: RedactionPolicy = { fields: [], tools: {} };

/** What a redacted value is replaced with. */
export const REDACTED_VALUE = '[redacted]';
