// The step drawer: one journal step beside the timeline — its status, times and execution, what it
// received and returned (step-io.tsx), a "load full value" action when the list carried a
// truncated value, and the reset actions that start a new run from this step. Non-modal: the
// timeline stays usable (and focused) while it is open; Escape or the close button shuts it.
import { useEffect, useState } from 'react';
import { isMissingRoute, runsApi, type Step } from '../api.ts';
import { formatTime } from '../format.ts';
import { StepIo } from './step-io.tsx';

export interface StepDrawerProps {
  runId: string;
  step: Step;
  onClose(): void;
  /** Starts a reset keeping the journal through `position`; absent when resets are not offered. */
  onReset?: (position: number) => void;
}

export function StepDrawer({ runId, step, onClose, onReset }: StepDrawerProps) {
  const [full, setFull] = useState<Step>();
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string>();
  // A newer list entry for the same step (it committed) replaces a stale full copy.
  const shown =
    full !== undefined && full.seq === step.seq && full.status === step.status ? full : step;
  const truncated = shown.inputTruncated === true || shown.outputTruncated === true;
  const hasIo = 'input' in shown || 'output' in shown;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const loadFull = async () => {
    setLoading(true);
    setError(undefined);
    try {
      setFull((await runsApi.step(runId, step.seq)).step);
    } catch (e) {
      setError(
        isMissingRoute(e) ? 'This server cannot return a step’s full value.' : (e as Error).message,
      );
    } finally {
      setLoading(false);
    }
  };

  const rows: Array<[string, string]> = [
    ['Status', shown.status],
    ['Attempts', String(shown.attempts)],
    ['Execution id', shown.executionId ?? '—'],
    ['Effect class', shown.effectClass ?? '—'],
    ['Queued', formatTime(shown.queuedAt)],
    ['Started', formatTime(shown.startedAt)],
    ['Ended', formatTime(shown.endedAt)],
    ['Deadline', formatTime(shown.deadlineAt)],
  ];
  return (
    <aside
      className="drawer step-detail"
      data-testid="step-detail"
      data-seq={step.seq}
      aria-label={`Step ${step.seq}: ${step.kind} ${step.name}`}
    >
      <header className="drawer-head">
        <h2>
          <span className="muted">#{step.seq}</span>{' '}
          <span className={`kind kind-${step.kind}`}>{step.kind}</span> {step.name}
        </h2>
        <button
          type="button"
          className="btn btn-ghost btn-small"
          onClick={onClose}
          aria-label="Close step"
        >
          ✕
        </button>
      </header>
      <div className="drawer-body">
        <dl>
          {rows.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd className={k === 'Execution id' ? 'mono' : undefined}>{v}</dd>
            </div>
          ))}
        </dl>
        {shown.error !== undefined && shown.error !== null ? (
          <pre className="code code-error">{JSON.stringify(shown.error, null, 2)}</pre>
        ) : null}
        <section aria-label="Input and output" className="drawer-io">
          {hasIo ? (
            <StepIo step={shown} />
          ) : (
            <p className="muted small" data-testid="io-unavailable">
              This server does not report step inputs and outputs.
            </p>
          )}
          {truncated ? (
            <div className="inline" data-testid="truncated">
              <span className="muted small">
                {[
                  shown.inputTruncated === true ? 'input' : null,
                  shown.outputTruncated === true ? 'output' : null,
                ]
                  .filter(Boolean)
                  .join(' and ')}{' '}
                cut short here.
              </span>
              <button
                type="button"
                className="btn btn-small"
                onClick={() => void loadFull()}
                disabled={loading}
              >
                Load full value
              </button>
            </div>
          ) : null}
          {error !== undefined ? (
            <p className="form-error" role="alert">
              {error}
            </p>
          ) : null}
        </section>
        {onReset !== undefined ? (
          <section aria-label="Reset from this step" className="drawer-actions">
            <h3 className="small-heading">New run from here</h3>
            <p className="muted small">
              A reset reuses this run’s journal up to a position and executes the rest again (side
              effects before it are not repeated).
            </p>
            <div className="inline">
              <button
                type="button"
                className="btn btn-small"
                data-testid="reset-through-step"
                onClick={() => onReset(step.seq)}
              >
                Reset after #{step.seq}
              </button>
              <button
                type="button"
                className="btn btn-small"
                data-testid="reset-before-step"
                onClick={() => onReset(step.seq - 1)}
              >
                Reset from #{step.seq} (run it again)
              </button>
            </div>
          </section>
        ) : null}
      </div>
    </aside>
  );
}
