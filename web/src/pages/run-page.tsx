// One run: status and counters, its timeline, its live event stream (fetch-based SSE, resumed with
// Last-Event-ID), forms to answer its input waits, cancel, and resolve tool executions whose
// outcome is unknown.
import { useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError, TERMINAL, runsApi, type Run, type RunEvent, type Step } from '../api.ts';
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
import { useRunLive } from '../use-run-live.ts';
import { InputForm, ResolveForm } from './run-actions.tsx';

export function RunPage() {
  const { id = '' } = useParams();
  const { run, steps, events, streamState, error, setError, setRun, load } = useRunLive(id);
  const [selected, setSelected] = useState<number>();
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
  const waitingInputs = steps.filter((s) => s.kind === 'input' && s.status === 'waiting');
  const unknown = steps.filter((s) => s.status === 'unknown' && s.executionId !== null);
  const selectedStep = steps.find((s) => s.seq === selected);
  const cancellable = !TERMINAL.has(run.status) && run.status !== 'cancelling';

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
            {run.parentRunId !== null ? (
              <>
                {' '}
                · child of{' '}
                <Link to={`/runs/${run.parentRunId}`} className="mono">
                  {shortId(run.parentRunId)}
                </Link>
              </>
            ) : null}
          </>
        }
        actions={
          <>
            <LiveDot state={streamState} />
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
        </Notice>
      ) : null}
      <Panel title="Timeline" id="timeline">
        <Timeline
          steps={steps}
          origin={origin}
          end={end}
          selected={selected}
          onSelect={(seq) => setSelected(seq === selected ? undefined : seq)}
        />
        {selectedStep !== undefined ? <StepDetail step={selectedStep} /> : null}
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
        hint={run.waitingReason ?? run.outcome ?? undefined}
        testId="run-status"
      />
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

function StepDetail({ step }: { step: Step }) {
  const rows: Array<[string, string]> = [
    ['Effect', `#${step.seq} ${step.kind} ${step.name}`],
    ['Status', step.status],
    ['Attempts', String(step.attempts)],
    ['Execution id', step.executionId ?? '—'],
    ['Effect class', step.effectClass ?? '—'],
    ['Queued', formatTime(step.queuedAt)],
    ['Started', formatTime(step.startedAt)],
    ['Ended', formatTime(step.endedAt)],
    ['Deadline', formatTime(step.deadlineAt)],
  ];
  return (
    <div className="step-detail" data-testid="step-detail">
      <dl>
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd className={k === 'Execution id' ? 'mono' : undefined}>{v}</dd>
          </div>
        ))}
      </dl>
      {step.error !== undefined ? (
        <pre className="code code-error">{JSON.stringify(step.error, null, 2)}</pre>
      ) : null}
    </div>
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
