// Human formatting for `keel runs`: the list table, the single-run view, one line per event, the
// steps timeline and the live status line. Pure string functions: no I/O, no clocks (callers pass
// `now`), and never a throw on a field the server left out or shaped differently; `--json` output
// bypasses this file.
import type { Run, RunEvent, RunTree, Step, ToolOutput } from './http-client.ts';

const CELL_MAX_CHARS = 48;
/** The steps table's `input → output` column is cut here. */
const STEP_SUMMARY_MAX_CHARS = 100;
const SUMMARY_MAX_CHARS = 100;
const VALUE_MAX_CHARS = 40;
const EVENT_TYPE_WIDTH_CHARS = 18;
/** `HH:MM:SS.mmm`, as formatClock writes it. */
const CLOCK_WIDTH_CHARS = 12;
const FIELD_LABEL_WIDTH_CHARS = 14;
const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function toDate(at: unknown): Date | undefined {
  if (typeof at !== 'string' && typeof at !== 'number') return undefined;
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** `2025-01-31 14:05:09` in local time, or '-' when absent. */
export function formatDateTime(at: unknown): string {
  const d = toDate(at);
  if (d === undefined) return at === undefined || at === null ? '-' : String(at);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** `14:05:09.123` in local time. */
export function formatClock(at: unknown): string {
  const d = toDate(at);
  if (d === undefined) return '--:--:--.---';
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** `850ms`, `4.2s`, `3m04s`, `2h05m`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const totalSeconds = Math.floor(ms / 1_000);
  if (ms < 3_600_000) return `${Math.floor(totalSeconds / 60)}m${pad2(totalSeconds % 60)}s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  return `${Math.floor(totalMinutes / 60)}h${pad2(totalMinutes % 60)}m`;
}

function between(from: unknown, to: unknown): string {
  const a = toDate(from);
  const b = toDate(to);
  return a === undefined || b === undefined ? '-' : formatDuration(b.getTime() - a.getTime());
}

/**
 * Left-aligned columns two spaces apart; the last column is not padded (and may be given a wider
 * cut, for a free-text summary).
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  lastColumnMaxChars = CELL_MAX_CHARS,
): string {
  const cells = [headers, ...rows].map((row) =>
    row.map((cell, i) =>
      truncate(cell, i === row.length - 1 ? lastColumnMaxChars : CELL_MAX_CHARS),
    ),
  );
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function compactJson(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return /^[\w.@/:-]+$/.test(value) ? value : JSON.stringify(value);
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json;
}

function errorText(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code === 'string') return typeof message === 'string' ? `${code}: ${message}` : code;
  }
  return compactJson(error);
}

export function formatRunTable(runs: readonly Run[]): string {
  if (runs.length === 0) return 'no runs';
  const rows = runs.map((run) => [
    run.id,
    run.status,
    run.agentVersion ? `${run.agent}@${run.agentVersion}` : run.agent,
    run.priority ?? '-',
    formatDateTime(run.createdAt),
    run.endedAt === undefined ? '-' : between(run.createdAt, run.endedAt),
  ]);
  return formatTable(['ID', 'STATUS', 'AGENT', 'PRIORITY', 'CREATED', 'TOOK'], rows);
}

/** The `keel runs tree` view: one run per line, indented by depth under its parent. */
export function formatRunTree(tree: RunTree): string {
  const rows = tree.runs.map((run) => [
    `${'  '.repeat(run.depth)}${run.id}`,
    run.waitingReason === null ? run.status : `${run.status} (${run.waitingReason})`,
    `${run.agent}@${run.agentVersion}`,
    run.onParentEnd ?? '-',
    formatDateTime(run.createdAt),
    run.endedAt === null ? '-' : between(run.createdAt, run.endedAt),
  ]);
  const table = formatTable(['ID', 'STATUS', 'AGENT', 'ON PARENT END', 'CREATED', 'TOOK'], rows);
  return tree.truncated ? `${table}\n… more runs below the limit (--limit)` : table;
}

function indentJson(value: unknown): string {
  return (JSON.stringify(value, null, 2) ?? 'undefined').replace(/^/gm, '  ');
}

/** The `keel runs get` view: one field per line, input/result as indented JSON. */
export function formatRun(run: Run): string {
  const field = (label: string, value: string): string =>
    `${`${label}:`.padEnd(FIELD_LABEL_WIDTH_CHARS)}${value}`;
  const lines = [
    field('id', run.id),
    field('agent', `${run.agent}${run.agentVersion ? `@${run.agentVersion}` : ''}`),
    field('status', run.status),
    field('tenant', run.tenantId ?? '-'),
    field('priority', run.priority ?? '-'),
    field('stateVersion', String(run.stateVersion ?? '-')),
    field('created', formatDateTime(run.createdAt)),
    field('updated', formatDateTime(run.updatedAt)),
  ];
  if (run.endedAt !== undefined)
    lines.push(
      field(
        'ended',
        `${formatDateTime(run.endedAt)} (took ${between(run.createdAt, run.endedAt)})`,
      ),
    );
  if (run.waitingReason !== undefined && run.waitingReason !== null) {
    const since =
      typeof run.waitingSince === 'string' ? ` since ${formatDateTime(run.waitingSince)}` : '';
    lines.push(
      field(
        'waiting',
        `${typeof run.waitingReason === 'string' ? run.waitingReason : compactJson(run.waitingReason)}${since}`,
      ),
    );
  }
  if (run.progress !== undefined && run.progress !== null)
    lines.push(
      field('progress', `${compactJson(run.progress.state)} at ${formatDateTime(run.progress.at)}`),
    );
  if (run.stalled !== undefined && run.stalled !== null) {
    const effect = run.stalled.effect;
    const on =
      effect === null
        ? ''
        : ` on ${effect.kind} ${effect.name} #${effect.seq} (attempt ${effect.attempt})`;
    lines.push(
      field(
        'stalled',
        `since ${formatDateTime(run.stalled.since)}${on}, onStall ${run.stalled.policy}`,
      ),
    );
  }
  if (run.error !== undefined && run.error !== null)
    lines.push(field('error', errorText(run.error)));
  const lineage = formatLineage(run);
  if (lineage !== undefined) lines.push(field('lineage', lineage));
  lines.push('input:', indentJson(run.input));
  if (run.result !== undefined) lines.push('result:', indentJson(run.result));
  return lines.join('\n');
}

/** Where a run came from (`rerun of …`, `reset from … at position N`), or undefined. */
export function formatLineage(run: Run): string | undefined {
  if (run.resetFrom !== undefined && run.resetFrom !== null)
    return `reset from ${run.resetFrom.runId} at position ${run.resetFrom.position}`;
  if (run.rerunOf !== undefined && run.rerunOf !== null) return `rerun of ${run.rerunOf}`;
  return undefined;
}

/** A short `key=value` digest of an event's data, errors first. */
export function summarizeEventData(data: unknown): string {
  if (data === undefined || data === null) return '';
  if (typeof data !== 'object' || Array.isArray(data))
    return truncate(compactJson(data), SUMMARY_MAX_CHARS);
  const entries = Object.entries(data as Record<string, unknown>);
  const parts = entries
    .filter(([key]) => key === 'error')
    .map(([, value]) => truncate(errorText(value), VALUE_MAX_CHARS * 2));
  for (const [key, value] of entries) {
    if (key === 'error' || value === undefined || value === null) continue;
    const shown =
      typeof value === 'object'
        ? Array.isArray(value)
          ? `[${value.length}]`
          : '{…}'
        : compactJson(value);
    parts.push(`${key}=${truncate(shown, VALUE_MAX_CHARS)}`);
  }
  return truncate(parts.join(' '), SUMMARY_MAX_CHARS);
}

/** `14:05:09.123  #12  tool.completed      name=search attempts=1` */
export function formatEventLine(event: RunEvent): string {
  const seq = `#${event.seq}`.padStart(5);
  const type = String(event.type).padEnd(EVENT_TYPE_WIDTH_CHARS);
  return `${formatClock(event.at)}  ${seq}  ${type}  ${summarizeEventData(event.data)}`.trimEnd();
}

/**
 * A piece of a running tool's live output, one line per line of it, each marked with the tool's
 * journal position and stream (a piece may end mid-line: the rest comes with the next piece).
 */
export function formatToolOutput(output: ToolOutput): string {
  const position = `@${output.seq}`.padStart(5);
  const mark = `${' '.repeat(CLOCK_WIDTH_CHARS)}  ${position}  ${output.tool} ${output.stream} |`;
  return output.text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `${mark} ${line}`)
    .join('\n');
}

/** The steps timeline: when each step started relative to the first, how long it queued and ran. */
export function formatStepTable(steps: readonly Step[]): string {
  if (steps.length === 0) return 'no steps';
  const origins = steps
    .map((s) => toDate(s.queuedAt ?? s.startedAt)?.getTime())
    .filter((t) => t !== undefined);
  const origin = origins.length === 0 ? undefined : Math.min(...origins);
  const rows = steps.map((step) => {
    const first = toDate(step.queuedAt ?? step.startedAt);
    const offset =
      origin === undefined || first === undefined
        ? '-'
        : `+${formatDuration(first.getTime() - origin)}`;
    const note = summarizeStepIo(step);
    return [
      String(step.seq),
      step.kind,
      step.name,
      step.status,
      String(step.attempts ?? '-'),
      offset,
      between(step.queuedAt, step.startedAt),
      between(step.startedAt, step.endedAt),
      note,
    ];
  });
  return formatTable(
    ['SEQ', 'KIND', 'NAME', 'STATUS', 'ATTEMPTS', 'AT', 'QUEUED', 'RAN', 'INPUT → OUTPUT'],
    rows,
    STEP_SUMMARY_MAX_CHARS,
  );
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An `exec` result (or any tool output shaped like one): exit code, stdout and stderr. */
function execOutput(
  value: unknown,
):
  | { exitCode: unknown; stdout: string; stderr: string; rest: Record<string, unknown> }
  | undefined {
  if (!isRecord(value) || !('exitCode' in value)) return undefined;
  const { exitCode, stdout, stderr, ...rest } = value;
  if (typeof stdout !== 'string' || typeof stderr !== 'string') return undefined;
  return { exitCode, stdout, stderr, rest };
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** A step's input on one line: a model call's last message, else compact JSON. */
function inputSummary(step: Step): string {
  const input = step.input;
  if (step.kind === 'model' && isRecord(input) && Array.isArray(input.messages)) {
    const last: unknown = input.messages.at(-1);
    if (isRecord(last)) {
      const content = typeof last.content === 'string' ? last.content : compactJson(last.content);
      return `${String(last.role)}: ${oneLine(content)}`;
    }
  }
  return oneLine(compactJson(input));
}

/** A step's output on one line: a model's text or tool calls, exec's exit code and output. */
function outputSummary(step: Step): string {
  const output = step.output;
  const exec = execOutput(output);
  if (exec !== undefined)
    return `exit ${String(exec.exitCode)} ${oneLine(JSON.stringify(exec.stdout + exec.stderr))}`;
  if (step.kind === 'model' && isRecord(output)) {
    const calls = Array.isArray(output.toolCalls) ? output.toolCalls : [];
    const named = calls.map((call) => (isRecord(call) ? `${String(call.name)}()` : '?'));
    const text = typeof output.content === 'string' ? output.content : '';
    return oneLine([text === '' ? '' : JSON.stringify(text), ...named].join(' ')) || '""';
  }
  return oneLine(compactJson(output));
}

/** `input → output` on one line for the steps table (the error when the step failed). */
export function summarizeStepIo(step: Step): string {
  const failed = step.error !== undefined && step.error !== null;
  const input = step.input === undefined ? '' : inputSummary(step);
  const output = failed
    ? errorText(step.error)
    : step.output === undefined
      ? ''
      : outputSummary(step);
  if (input === '' && output === '') return failed ? '' : (step.executionId ?? '');
  return input === '' ? `→ ${output}` : `${input} → ${output}`;
}

function indentText(text: string, prefix: string): string {
  return text.replace(/\n$/, '').replace(/^/gm, prefix);
}

/** One side of a step in full: pretty JSON, or exit code + stdout/stderr for an exec result. */
function formatIoSide(label: string, value: unknown): string[] {
  const exec = label === 'output' ? execOutput(value) : undefined;
  if (exec === undefined)
    return [`  ${label}:`, indentText(JSON.stringify(value, null, 2), '    ')];
  const lines = [`  exit code: ${String(exec.exitCode)}`];
  for (const [name, text] of [
    ['stdout', exec.stdout],
    ['stderr', exec.stderr],
  ] as const)
    lines.push(text === '' ? `  ${name}: (empty)` : `  ${name}:\n${indentText(text, '    | ')}`);
  if (Object.keys(exec.rest).length > 0)
    lines.push('  details:', indentText(JSON.stringify(exec.rest, null, 2), '    '));
  return lines;
}

/** `keel runs show --io`: each step's header line, then its whole input and output. */
export function formatStepIo(step: Step): string {
  const took = between(step.startedAt ?? step.queuedAt, step.endedAt);
  const lines = [`#${step.seq} ${step.kind} ${step.name}  ${step.status}  ${took}`];
  if (step.input !== undefined) lines.push(...formatIoSide('input', step.input));
  if (step.output !== undefined) lines.push(...formatIoSide('output', step.output));
  if (step.error !== undefined && step.error !== null)
    lines.push(`  error: ${errorText(step.error)}`);
  if (step.input === undefined && step.output === undefined && step.error === undefined)
    lines.push('  (no input or output)');
  return lines.join('\n');
}

export interface StatusLineState {
  runId: string;
  tick: number;
  elapsedMs: number;
  events: number;
  last: string;
}

/** The in-place status line shown on a terminal while following a run. */
export function formatStatusLine(state: StatusLineState, columns: number): string {
  const frame = SPINNER_FRAMES[state.tick % SPINNER_FRAMES.length] ?? '-';
  const text = `${frame} ${state.runId}  ${formatDuration(state.elapsedMs)}  ${state.events} events  ${state.last}`;
  return truncate(text, Math.max(columns - 1, 10));
}

/** The closing line of `submit --wait`: outcome, duration and the result or error. */
export function formatOutcome(run: Run): string {
  const took = run.endedAt === undefined ? '' : ` in ${between(run.createdAt, run.endedAt)}`;
  const head = `run ${run.id} ${run.status}${took}`;
  if (run.status === 'succeeded')
    return run.result === undefined ? head : `${head}\nresult:\n${indentJson(run.result)}`;
  return run.error === undefined || run.error === null
    ? head
    : `${head}\nerror: ${errorText(run.error)}`;
}
