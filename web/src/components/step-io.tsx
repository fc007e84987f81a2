// What a step received and returned, drawn for its kind: a model call as a conversation (messages
// by role, then the answer with its tool calls and usage), a tool call as arguments and result, a
// sandbox `exec` as exit code, stdout and stderr. Values are read defensively: a shape this file
// does not recognise (another server version, a custom step) is shown as plain JSON.
import type { ReactNode } from 'react';
import type { Json, Step } from '../api.ts';
import { formatUsd } from '../format.ts';
import { JsonView } from './json-view.tsx';

type Obj = { [key: string]: Json };

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Message {
  role: string;
  content: Json;
  toolCalls?: ToolCallView[];
  toolCallId?: string;
  name?: string;
}
interface ToolCallView {
  id?: string;
  name: string;
  args: Json;
}

function toolCallsOf(value: Json | undefined): ToolCallView[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const calls = value.filter(isObj).map((c) => ({
    ...(typeof c.id === 'string' ? { id: c.id } : {}),
    name: typeof c.name === 'string' ? c.name : '?',
    args: c.args ?? c.arguments ?? null,
  }));
  return calls.length === value.length ? calls : undefined;
}

/** The model request's messages, or undefined when the input is not a model request. */
function messagesOf(input: Json | undefined): Message[] | undefined {
  if (!isObj(input) || !Array.isArray(input.messages)) return undefined;
  const messages: Message[] = [];
  for (const m of input.messages) {
    if (!isObj(m) || typeof m.role !== 'string') return undefined;
    const toolCalls = toolCallsOf(m.toolCalls);
    messages.push({
      role: m.role,
      content: m.content ?? null,
      ...(toolCalls !== undefined ? { toolCalls } : {}),
      ...(typeof m.toolCallId === 'string' ? { toolCallId: m.toolCallId } : {}),
      ...(typeof m.name === 'string' ? { name: m.name } : {}),
    });
  }
  return messages;
}

function Text({ value }: { value: Json }) {
  return typeof value === 'string' ? (
    <div className="msg-text">{value}</div>
  ) : (
    <JsonView value={value} />
  );
}

function ToolCalls({ calls }: { calls: ToolCallView[] }) {
  return (
    <ul className="tool-calls" data-testid="tool-calls">
      {calls.map((c, i) => (
        <li key={c.id ?? i} data-tool={c.name}>
          <span className="muted small">calls</span> <code>{c.name}</code>
          {c.id !== undefined ? <span className="muted small mono"> {c.id}</span> : null}
          <JsonView value={c.args} />
        </li>
      ))}
    </ul>
  );
}

function Bubble({
  speaker: role,
  meta,
  children,
}: {
  speaker: string;
  meta?: ReactNode;
  children: ReactNode;
}) {
  return (
    <li className={`msg msg-${role}`} data-role={role}>
      <div className="msg-role">
        {role}
        {meta}
      </div>
      {children}
    </li>
  );
}

function Usage({ usage }: { usage: Json | undefined }) {
  if (!isObj(usage)) return null;
  const n = (v: Json | undefined) => (typeof v === 'number' ? v.toLocaleString('en-US') : '—');
  return (
    <p className="muted small" data-testid="model-usage">
      {n(usage.inputTokens)} tokens in
      {typeof usage.cachedInputTokens === 'number' && usage.cachedInputTokens > 0
        ? ` (${n(usage.cachedInputTokens)} cached)`
        : ''}{' '}
      · {n(usage.outputTokens)} out
      {typeof usage.costUsd === 'number' ? ` · ${formatUsd(usage.costUsd)}` : ''}
    </p>
  );
}

export function ModelIo({ input, output }: { input: Json | undefined; output: Json | undefined }) {
  const messages = messagesOf(input);
  const answer = isObj(output) ? (output.content ?? output.text) : undefined;
  const calls = isObj(output) ? toolCallsOf(output.toolCalls) : undefined;
  const tools = isObj(input) && Array.isArray(input.tools) ? input.tools : [];
  return (
    <div data-testid="model-conversation">
      {isObj(input) && typeof input.model === 'string' ? (
        <p className="muted small">
          model <code>{input.model}</code>
          {tools.length > 0
            ? ` · tools: ${tools.map((t) => (typeof t === 'string' ? t : isObj(t) && typeof t.name === 'string' ? t.name : '?')).join(', ')}`
            : ''}
        </p>
      ) : null}
      {messages !== undefined ? (
        <ol className="conversation">
          {messages.map((m, i) => (
            <Bubble
              // biome-ignore lint/suspicious/noArrayIndexKey: messages are a fixed, ordered list.
              key={i}
              speaker={m.role}
              meta={
                m.toolCallId !== undefined ? (
                  <span className="mono"> · answers {m.toolCallId}</span>
                ) : null
              }
            >
              {m.content !== '' ? <Text value={m.content} /> : null}
              {m.toolCalls !== undefined && m.toolCalls.length > 0 ? (
                <ToolCalls calls={m.toolCalls} />
              ) : null}
            </Bubble>
          ))}
          {output !== undefined && isObj(output) ? (
            <Bubble speaker="response" meta={<span> · the model’s answer</span>}>
              {answer !== undefined && answer !== '' && answer !== null ? (
                <Text value={answer} />
              ) : null}
              {calls !== undefined && calls.length > 0 ? <ToolCalls calls={calls} /> : null}
              <Usage usage={output.usage} />
            </Bubble>
          ) : null}
        </ol>
      ) : (
        <Raw label="Input" value={input} />
      )}
      {messages === undefined || (output !== undefined && !isObj(output)) ? (
        <Raw label="Output" value={output} />
      ) : null}
    </div>
  );
}

/** Exec fields drawn on their own; the rest (signal, limit, truncated, usage…) show as JSON. */
const EXEC_SHOWN: ReadonlySet<string> = new Set(['exitCode', 'stdout', 'stderr']);

function execOf(
  output: Json | undefined,
): { exitCode: number; stdout: string; stderr: string } | undefined {
  if (!isObj(output) || typeof output.exitCode !== 'number') return undefined;
  if (typeof output.stdout !== 'string' || typeof output.stderr !== 'string') return undefined;
  return { exitCode: output.exitCode, stdout: output.stdout, stderr: output.stderr };
}

export function ExecIo({ input, output }: { input: Json | undefined; output: Json }) {
  const exec = execOf(output)!;
  return (
    <div data-testid="exec-output">
      <Raw label="Command" value={input} />
      <h4 className="io-heading">
        Exit code{' '}
        <span
          className={`badge ${exec.exitCode === 0 ? 'status-succeeded' : 'status-failed'}`}
          data-testid="exec-exit-code"
        >
          {exec.exitCode}
        </span>
      </h4>
      <h4 className="io-heading">stdout</h4>
      <pre className="code" data-testid="exec-stdout">
        {exec.stdout === '' ? ' ' : exec.stdout}
      </pre>
      <h4 className="io-heading">stderr</h4>
      <pre className="code code-error" data-testid="exec-stderr">
        {exec.stderr === '' ? ' ' : exec.stderr}
      </pre>
      {isObj(output) ? (
        <Raw
          label="Details"
          value={Object.fromEntries(
            Object.entries(output).filter(([k, v]) => !EXEC_SHOWN.has(k) && v !== null),
          )}
        />
      ) : null}
    </div>
  );
}

function Raw({ label, value }: { label: string; value: Json | undefined }) {
  if (value === undefined) return null;
  return (
    <>
      <h4 className="io-heading">{label}</h4>
      <JsonView value={value} testId={`io-${label.toLowerCase()}`} />
    </>
  );
}

/** The step's input and output in the view its kind and shape call for. */
export function StepIo({ step }: { step: Step }) {
  if (step.kind === 'model') return <ModelIo input={step.input} output={step.output} />;
  if (step.output !== undefined && execOf(step.output) !== undefined)
    return <ExecIo input={step.input} output={step.output} />;
  const labels: [string, string] =
    step.kind === 'tool' ? ['Arguments', 'Result'] : ['Input', 'Output'];
  return (
    <div data-testid={step.kind === 'tool' ? 'tool-io' : 'step-io'}>
      <Raw label={labels[0]} value={step.input} />
      <Raw label={labels[1]} value={step.output} />
    </div>
  );
}
