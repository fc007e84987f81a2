// A run's lineage and the actions that make a new run from it: rerun (same agent, version and
// input), reset (reuse the journal up to a position, execute the rest again) and fork (a reset with
// another input and/or agent version). Each posts to the run's route, which answers 201 with the
// new run, and the page moves to it. A server without these routes (older than issue 17) answers
// 404 `not_found`: the action says so instead of failing obscurely.
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { isMissingRoute, runsApi, type ForkRequest, type Run, type Step } from '../api.ts';
import { shortId } from '../format.ts';
import { useTenant } from '../tenant-context.ts';

export type LineageAction =
  | { mode: 'reset'; position?: number }
  | { mode: 'fork'; position?: number };

/** "rerun of …", "reset from … at #N": links to the source run; nothing for an original run. */
export function Lineage({ run }: { run: Run }) {
  const parts = [];
  if (run.rerunOf !== undefined && run.rerunOf !== null)
    parts.push(
      <span key="rerun" data-testid="lineage-rerun">
        {' '}
        · rerun of{' '}
        <Link to={`/runs/${run.rerunOf}`} className="mono">
          {shortId(run.rerunOf)}
        </Link>
      </span>,
    );
  if (run.resetFrom !== undefined && run.resetFrom !== null)
    parts.push(
      <span key="reset" data-testid="lineage-reset">
        {' '}
        · reset from{' '}
        <Link to={`/runs/${run.resetFrom.runId}`} className="mono">
          {shortId(run.resetFrom.runId)}
        </Link>{' '}
        after #{run.resetFrom.position}
      </span>,
    );
  return <>{parts}</>;
}

/** A short lineage tag for the runs list. */
export function LineageTag({ run }: { run: Run }) {
  if (run.rerunOf !== undefined && run.rerunOf !== null)
    return (
      <Link
        to={`/runs/${run.rerunOf}`}
        className="lineage-tag"
        data-testid="lineage-tag"
        title={`Rerun of ${run.rerunOf}`}
      >
        ↻ {shortId(run.rerunOf)}
      </Link>
    );
  if (run.resetFrom !== undefined && run.resetFrom !== null)
    return (
      <Link
        to={`/runs/${run.resetFrom.runId}`}
        className="lineage-tag"
        data-testid="lineage-tag"
        title={`Reset from ${run.resetFrom.runId} after position ${run.resetFrom.position}`}
      >
        ⤷ {shortId(run.resetFrom.runId)} #{run.resetFrom.position}
      </Link>
    );
  return null;
}

function actionError(e: unknown, what: string): string {
  return isMissingRoute(e)
    ? `This server cannot ${what} runs (it predates rerun, reset and fork).`
    : (e as Error).message;
}

/** The page header's Rerun button; Reset and Fork open their form (RunActionForm). */
export function RerunButton({ run, onError }: { run: Run; onError: (message: string) => void }) {
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const rerun = async () => {
    if (
      !window.confirm(
        `Rerun ${shortId(run.id)}? A new run with the same input executes every step again.`,
      )
    )
      return;
    setBusy(true);
    try {
      navigate(`/runs/${(await runsApi.rerun(run.id)).id}`);
    } catch (e) {
      onError(actionError(e, 'rerun'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <button
      type="button"
      className="btn"
      onClick={() => void rerun()}
      disabled={busy}
      data-testid="rerun-run"
    >
      Rerun
    </button>
  );
}

/** Where a reset would start by default: the last committed step (the whole successful prefix). */
export function defaultPosition(run: Run, steps: readonly Step[]): number {
  const suggested = (run.error?.details as { resetFrom?: unknown } | undefined)?.resetFrom;
  if (typeof suggested === 'number') return suggested;
  const committed = steps.filter((s) => s.status === 'succeeded').map((s) => s.seq);
  return committed.length > 0 ? Math.max(...committed) : 0;
}

export function RunActionForm({
  run,
  steps,
  action,
  onClose,
}: {
  run: Run;
  steps: readonly Step[];
  action: LineageAction;
  onClose(): void;
}) {
  const navigate = useNavigate();
  const tenant = useTenant();
  const fork = action.mode === 'fork';
  const [position, setPosition] = useState(
    String(action.position ?? (fork ? '' : defaultPosition(run, steps))),
  );
  const [input, setInput] = useState(JSON.stringify(run.input ?? null, null, 2));
  const [version, setVersion] = useState(run.agentVersion);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const versions = [
    ...new Set([
      run.agentVersion,
      ...(tenant?.agents.filter((a) => a.name === run.agent).map((a) => a.version) ?? []),
    ]),
  ];
  const last = steps.length > 0 ? Math.max(...steps.map((s) => s.seq)) : 0;
  const at = steps.find((s) => String(s.seq) === position.trim());

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    const p = position.trim() === '' ? undefined : Number(position);
    if (p !== undefined && !(Number.isInteger(p) && p >= 0))
      return setError('The position is a step number (0 keeps nothing).');
    if (!fork && p === undefined) return setError('A reset needs a position.');
    const body: ForkRequest = {};
    if (fork) {
      let value: unknown;
      try {
        value = JSON.parse(input);
      } catch {
        return setError('The input must be JSON.');
      }
      if (JSON.stringify(value) !== JSON.stringify(run.input ?? null)) body.input = value;
      if (version.trim() !== run.agentVersion) body.agentVersion = version.trim();
      if (p !== undefined) body.position = p;
    }
    setBusy(true);
    try {
      const created = fork ? await runsApi.fork(run.id, body) : await runsApi.reset(run.id, p!);
      navigate(`/runs/${created.id}`);
    } catch (e) {
      setError(actionError(e, fork ? 'fork' : 'reset'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="action-form run-action-form"
      onSubmit={submit}
      data-testid={fork ? 'fork-form' : 'reset-form'}
      aria-label={fork ? 'Fork this run' : 'Reset this run'}
    >
      <p>
        {fork
          ? 'Fork: a new run with another input and/or agent version, reusing this run’s journal up to a position (empty: from the start).'
          : 'Reset: a new run that reuses this run’s journal up to a position and executes the rest again. Side effects up to it are not repeated; after it they run with new execution ids.'}
      </p>
      <div className="form-row">
        <label htmlFor="action-position">
          Keep the journal through position{' '}
          <span className="muted small">
            (0–{last}
            {at !== undefined ? `; #${at.seq} is ${at.kind} ${at.name}` : ''})
          </span>
        </label>
        <input
          id="action-position"
          className="mono"
          inputMode="numeric"
          value={position}
          onChange={(e) => setPosition(e.target.value)}
          placeholder={fork ? 'from the start' : undefined}
        />
      </div>
      {fork ? (
        <>
          <div className="form-row">
            <label htmlFor="fork-version">Agent version</label>
            <input
              id="fork-version"
              className="mono"
              list="fork-versions"
              value={version}
              onChange={(e) => setVersion(e.target.value)}
            />
            <datalist id="fork-versions">
              {versions.map((v) => (
                <option key={v} value={v} />
              ))}
            </datalist>
          </div>
          <div className="form-row">
            <label htmlFor="fork-input">Input (JSON)</label>
            <textarea
              id="fork-input"
              className="mono"
              rows={5}
              value={input}
              onChange={(e) => setInput(e.target.value)}
            />
          </div>
        </>
      ) : null}
      {error !== undefined ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {fork ? 'Start fork' : 'Start reset'}
        </button>
        <button type="button" className="btn btn-ghost" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
