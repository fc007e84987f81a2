// One run: status and counters, its lineage, its timeline with a drawer for the selected step's
// inputs and outputs, model answers as they stream, its live event stream (fetch-based SSE,
// resumed with Last-Event-ID), forms to answer its input waits, cancel, resolve tool executions
// whose outcome is unknown, rerun, reset or fork it, and its run tree (parent and children).
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError, TERMINAL, runsApi, type Run, type RunEvent } from '../api.ts';
import { StepDrawer } from '../components/step-drawer.tsx';
import { Timeline } from '../components/timeline.tsx';
import { LiveDot, Notice, PageHeader, Panel, Stat, StatusBadge } from '../components/ui.tsx';
import {
  formatDateTime,
  formatDuration,
  formatTime,
  formatUsd,
  preview,
  shortId,
} from '../format.ts';
import { useNow } from '../hooks.ts';
import { useRunLive, type StreamingCall } from '../use-run-live.ts';
import { InputForm, ResolveForm } from './run-actions.tsx';
import { Lineage, RerunButton, RunActionForm, type LineageAction } from './run-lineage.tsx';
import { RunFamily } from './run-tree.tsx';

export function RunPage() {
  const { id = '' } = useParams();
  const { run, steps, events, streaming, streamState, error, setError, setRun, load } =
    useRunLive(id);
  const [selected, setSelected] = useState<number>();
  const [action, setAction] = useState<LineageAction>();
  const [actionMessage, setActionMessage] = useState<string>();
  const closeDrawer = useCallback(() => setSelected(undefined), []);
  // A new run page (the one an action navigated to) starts with no drawer or form open.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `id` is the trigger.
  useEffect(() => {
    setSelected(undefined);
    setAction(undefined);
    setActionMessage(undefined);
  }, [id]);
  const live = run !== undefined && !TERMINAL.has(run.status);
  const now = useNow(250, live);

  if (error instanceof ApiError && error.status === 404) {
    return (
      <>
        <PageHeader title="Run not found" />
        <Notice tone="warn">
          No run <code>{id}</code> belongs to this tenant. <Link to="/runs">Back to runs</Link>
        </Notice>
      </>
    );
  }
  if (run === undefined)
    return error !== undefined ? (
      <Notice tone="error" title="Could not load the run">
        {error.message}
      </Notice>
    ) : (
      <p className="empty">Loading…</p>
    );

  const origin = Date.parse(run.createdAt);
  const end = run.endedAt !== null ? Date.parse(run.endedAt) : now;
  // An ended run answers no input, even when its journal still holds the wait it ended in.
  const waitingInputs = TERMINAL.has(run.status)
    ? []
    : steps.filter((s) => s.kind === 'input' && s.status === 'waiting');
  const unknown = steps.filter((s) => s.status === 'unknown' && s.executionId !== null);
  const selectedStep = steps.find((s) => s.seq === selected);
  const cancellable = !TERMINAL.has(run.status) && run.status !== 'cancelling';
  /** Reset and fork from a position need an ended run (the server refuses a live source). */
  const ended = TERMINAL.has(run.status);
  const divergedAt = nonDeterminismResetPosition(run);
  const openAction = (next: LineageAction) => {
    setActionMessage(undefined);
    setAction(next);
    requestAnimationFrame(() =>
      document.getElementById('run-action')?.scrollIntoView({ block: 'nearest' }),
    );
  };

  const cancel = async () => {
    if (
      !window.confirm(
        `Cancel run ${shortId(run.id)}? Running effects are stopped; finished side effects stay done.`,
      )
    )
      return;
    try {
      setRun(await runsApi.cancel(run.id));
    } catch (e) {
      setError(e as Error);
    }
  };

  return (
    <>
      <nav className="crumbs" aria-label="Breadcrumb">
        <Link to="/runs">Runs</Link> <span aria-hidden="true">/</span>{' '}
        <span className="mono">{shortId(run.id)}</span>
      </nav>
      <PageHeader
        title={
          <>
            <span>
              {run.agent}
              <span className="muted">@{run.agentVersion}</span>
            </span>{' '}
            <StatusBadge status={run.status} />
          </>
        }
        subtitle={
          <>
            <span className="mono" data-testid="run-id">
              {run.id}
            </span>{' '}
            · created {formatDateTime(run.createdAt)}
            {run.deadlineAt !== null ? <> · deadline {formatDateTime(run.deadlineAt)}</> : null}
            {run.expectedFinishAt != null ? (
              <span data-testid="run-expected-finish">
                {' '}
                · expected to finish {formatDateTime(run.expectedFinishAt)} at admission
              </span>
            ) : null}
            {run.parentRunId !== null ? (
              <>
                {' '}
                · child of{' '}
                <Link to={`/runs/${run.parentRunId}`} className="mono">
                  {shortId(run.parentRunId)}
                </Link>
              </>
            ) : null}
            <Lineage run={run} />
          </>
        }
        actions={
          <>
            <LiveDot state={streamState} />
            <RerunButton run={run} onError={setActionMessage} />
            <button
              type="button"
              className="btn"
              onClick={() => openAction({ mode: 'reset' })}
              disabled={!ended}
              title={ended ? undefined : 'A run can be reset once it has ended'}
              data-testid="reset-run"
            >
              Reset…
            </button>
            <button
              type="button"
              className="btn"
              onClick={() => openAction({ mode: 'fork' })}
              data-testid="fork-run"
            >
              Fork…
            </button>
            <button
              type="button"
              className="btn btn-danger"
              onClick={cancel}
              disabled={!cancellable}
              data-testid="cancel-run"
            >
              Cancel run
            </button>
          </>
        }
      />
      {error !== undefined ? <Notice tone="error">{error.message}</Notice> : null}
      {actionMessage !== undefined ? <Notice tone="error">{actionMessage}</Notice> : null}
      {action !== undefined ? (
        <Panel title={action.mode === 'fork' ? 'Fork this run' : 'Reset this run'} id="run-action">
          <RunActionForm
            key={`${action.mode}:${action.position ?? ''}`}
            run={run}
            steps={steps}
            action={action}
            onClose={() => setAction(undefined)}
          />
        </Panel>
      ) : null}
      <RunStats run={run} durationMs={end - origin} />
      {waitingInputs.length > 0 ? (
        <Panel title="Waiting for input" id="inputs">
          {waitingInputs.map((s) => (
            <InputForm key={s.seq} run={run} step={s} onDone={load} />
          ))}
        </Panel>
      ) : null}
      {unknown.length > 0 ? (
        <Panel title="Outcome unknown — decide" id="unknown">
          {unknown.map((s) => (
            <ResolveForm key={s.seq} run={run} step={s} onDone={load} />
          ))}
        </Panel>
      ) : null}
      {run.error !== null ? (
        <Notice tone="error" title={run.error.code}>
          {run.error.message}
          {divergedAt !== undefined ? (
            <div className="inline">
              <button
                type="button"
                className="btn btn-small"
                data-testid="reset-diverged"
                onClick={() => openAction({ mode: 'reset', position: divergedAt })}
              >
                Reset from position {divergedAt}
              </button>
              <span className="muted small">
                keeps the journal through #{divergedAt}, where replay still matched the code
              </span>
            </div>
          ) : null}
        </Notice>
      ) : null}
      <RunFamily runId={run.id} parentRunId={run.parentRunId} />
      {streaming.size > 0 ? <StreamingCalls calls={[...streaming.values()]} /> : null}
      <Panel title="Timeline" id="timeline">
        <Timeline
          runId={run.id}
          steps={steps}
          origin={origin}
          end={end}
          selected={selected}
          onSelect={(seq) => setSelected(seq === selected ? undefined : seq)}
        />
        {selectedStep !== undefined ? (
          <StepDrawer
            runId={run.id}
            step={selectedStep}
            onClose={closeDrawer}
            {...(ended
              ? { onReset: (position: number) => openAction({ mode: 'reset', position }) }
              : {})}
          />
        ) : null}
      </Panel>
      <div className="columns">
        <Panel title={`Events (${events.length})`} id="events">
          <EventList events={events} />
        </Panel>
        <Panel title="Input and result" id="io">
          <h3 className="small-heading">Input</h3>
          <pre className="code">{JSON.stringify(run.input, null, 2)}</pre>
          {run.result !== undefined ? (
            <>
              <h3 className="small-heading">Result</h3>
              <pre className="code" data-testid="run-result">
                {JSON.stringify(run.result, null, 2)}
              </pre>
            </>
          ) : null}
        </Panel>
      </div>
    </>
  );
}

function RunStats({ run, durationMs }: { run: Run; durationMs: number }) {
  return (
    <div className="stats" data-testid="run-stats">
      <Stat
        label="Status"
        value={run.status}
        hint={
          run.stalled
            ? `stalled since ${formatTime(run.stalled.since)}${run.stalled.effect ? ` on ${run.stalled.effect.name}` : ''} (onStall ${run.stalled.policy})`
            : (run.waitingReason ?? run.outcome ?? undefined)
        }
        testId="run-status"
      />
      {run.archived ? (
        <Stat
          label="Storage"
          value={run.archiveComplete === false ? 'archived (incomplete)' : 'archived'}
          hint="journal and events read back from the archive"
          testId="run-archived"
        />
      ) : null}
      {run.progress ? (
        <Stat
          label="Progress"
          value={shorten(JSON.stringify(run.progress.state))}
          hint={`reported ${formatTime(run.progress.at)}`}
          testId="run-progress"
        />
      ) : null}
      <Stat
        label="Duration"
        value={formatDuration(durationMs)}
        hint={run.endedAt !== null ? `ended ${formatTime(run.endedAt)}` : 'running clock'}
      />
      <Stat
        label="Steps"
        value={run.counters.steps}
        hint={run.budget.maxSteps !== undefined ? `budget ${run.budget.maxSteps}` : undefined}
      />
      <Stat
        label="Tokens"
        value={(run.counters.inputTokens + run.counters.outputTokens).toLocaleString('en-US')}
        hint={`${run.counters.inputTokens} in · ${run.counters.outputTokens} out`}
      />
      <Stat
        label="Cost"
        value={formatUsd(run.counters.costUsd)}
        hint={
          run.budget.maxCostUsd !== undefined
            ? `budget ${formatUsd(run.budget.maxCostUsd)}`
            : undefined
        }
      />
      <Stat label="Claims" value={run.attempts} hint="by workers, resumes included" />
    </div>
  );
}

/** A progress state on one line of the stats: its start, the full JSON is in the API. */
function shorten(text: string): string {
  return text.length <= 80 ? text : `${text.slice(0, 79)}…`;
}

/** A failed run's suggested reset position after a non-determinism error, if the server gave one. */
function nonDeterminismResetPosition(run: Run): number | undefined {
  if (run.status !== 'failed' || run.error?.code !== 'non_determinism') return undefined;
  const details = run.error.details as { resetFrom?: unknown } | undefined;
  return typeof details?.resetFrom === 'number' ? details.resetFrom : undefined;
}

/**
 * Model answers and tool output streaming now: the text so far, replaced by the committed step
 * when it lands.
 */
function StreamingCalls({ calls }: { calls: StreamingCall[] }) {
  return (
    <Panel title="Streaming now" id="streaming">
      {calls.map((c) => (
        <div key={c.seq} className="streaming-call" data-testid="live-text" data-seq={c.seq}>
          <div className="muted small">
            #{c.seq} {c.kind} <code>{c.model}</code>
            {c.attempt > 1 ? ` · attempt ${c.attempt}` : ''}
            {c.partial ? ' · joined mid-answer' : ''}
          </div>
          <div
            className={
              c.kind === 'tool' ? 'msg-text streaming-text tool-output' : 'msg-text streaming-text'
            }
            aria-live="polite"
          >
            {c.partial ? '…' : ''}
            {c.text}
            <span className="caret" aria-hidden="true" />
          </div>
        </div>
      ))}
    </Panel>
  );
}

function EventList({ events }: { events: RunEvent[] }) {
  const list = useRef<HTMLOListElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new event is the trigger to scroll to the bottom.
  useEffect(() => {
    const el = list.current;
    if (el !== null) el.scrollTop = el.scrollHeight;
  }, [events.length]);
  if (events.length === 0) return <p className="empty">No events yet.</p>;
  return (
    <ol
      className="events"
      ref={list}
      data-testid="events"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to be scrolled.
      tabIndex={0}
      aria-label="Run events"
      aria-live="polite"
    >
      {events.map((e) => (
        <li key={e.seq} data-type={e.type}>
          <span className="event-seq">{e.seq}</span>
          <span className="event-time">{formatTime(e.at)}</span>
          <span className={`event-type type-${e.type.split('.')[0]}`}>{e.type}</span>
          <span className="event-data mono">{preview(e.data)}</span>
        </li>
      ))}
    </ol>
  );
}
