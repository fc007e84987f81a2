// An agent's contract: the zod schemas `defineAgent({ input, output })` declares, checked where a
// run is created (API, schedule fires, ctx.child) and where it completes, and rendered as JSON
// Schema for GET /v1/agents. It never changes what the store holds: a run keeps the input it was
// submitted with, and the agent receives the schema's parse of it.
import { z } from 'zod';
import { KeelError } from '../domain/keel-error.ts';
import type { AgentDefinition, Json } from '../sdk/types.ts';

/** Issues reported per refusal; the rest are counted, so one huge bad input cannot bloat an error. */
const CONTRACT_ISSUES_MAX = 20;

/** One way a value breaks a schema, as the API and the journal carry it. */
export interface ContractIssue {
  path: Array<string | number>;
  code: string;
  message: string;
}

/**
 * The agent's parse of a run's input (the input itself when the agent declares no schema); throws
 * `agent_input_invalid` with the issues.
 * @example
 * parseAgentInput(greeter, { name: 'Ada' }); // { name: 'Ada' }
 * parseAgentInput(greeter, {}); // throws KeelError agent_input_invalid, details.issues[0].path ['name']
 */
export function parseAgentInput(agent: AgentDefinition, input: unknown): unknown {
  if (agent.input === undefined) return input;
  const parsed = agent.input.safeParse(input);
  if (parsed.success) return parsed.data;
  throw contractError('agent_input_invalid', agent, 'input', parsed.error);
}

/** The error a run's result earns when it breaks the agent's output schema, else undefined. */
export function checkAgentOutput(agent: AgentDefinition, result: Json): KeelError | undefined {
  if (agent.output === undefined) return undefined;
  const parsed = agent.output.safeParse(result);
  return parsed.success
    ? undefined
    : contractError('agent_output_invalid', agent, 'result', parsed.error);
}

/**
 * The agent's schemas as JSON Schema (what a client may send, what it gets back); null where the
 * agent declares none. Parts JSON Schema cannot express (a transform, a date) are left open.
 */
export function agentJsonSchemas(agent: AgentDefinition): {
  input: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
} {
  const render = (schema: z.ZodType | undefined, io: 'input' | 'output') =>
    schema === undefined
      ? null
      : (z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>);
  return { input: render(agent.input, 'input'), output: render(agent.output, 'output') };
}

function contractError(
  code: 'agent_input_invalid' | 'agent_output_invalid',
  agent: AgentDefinition,
  what: 'input' | 'result',
  error: z.ZodError,
): KeelError {
  const issues: ContractIssue[] = error.issues.slice(0, CONTRACT_ISSUES_MAX).map((issue) => ({
    path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
    code: issue.code,
    message: issue.message,
  }));
  const first = issues[0];
  const where = first === undefined || first.path.length === 0 ? '' : ` at ${first.path.join('.')}`;
  return new KeelError(
    code,
    `the ${what} does not match the ${what === 'input' ? 'input' : 'output'} schema of agent ${agent.name}@${agent.version}: ${first?.message ?? 'invalid'}${where}${error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : ''}`,
    {
      details: {
        agent: `${agent.name}@${agent.version}`,
        issues,
        ...(error.issues.length > issues.length
          ? { moreIssues: error.issues.length - issues.length }
          : {}),
      },
    },
  );
}
