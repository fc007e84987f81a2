// Operator actions on a run's effects: answer a waitForInput(key), and decide a tool execution
// whose outcome is unknown (retry it, mark it succeeded with a result, or mark it failed). Values
// are JSON, validated before sending.
import { useState, type FormEvent } from 'react';
import { runsApi, type Run, type Step } from '../api.ts';
import { formatTime } from '../format.ts';

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function InputForm({ run, step, onDone }: { run: Run; step: Step; onDone: () => void }) {
  const [text, setText] = useState('true');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const fieldId = `input-${step.seq}`;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseJson(text);
    if (!parsed.ok) return setError('The value must be JSON: true, 42, "text" (quoted), {"a": 1}…');
    setBusy(true);
    setError(undefined);
    try {
      await runsApi.input(run.id, step.name, parsed.value);
      onDone();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="action-form" onSubmit={submit} data-testid="input-form" data-key={step.name}>
      <label htmlFor={fieldId}>
        Value for <code>{step.name}</code>{' '}
        <span className="muted small">
          (JSON){step.deadlineAt !== null ? ` · times out at ${formatTime(step.deadlineAt)}` : ''}
        </span>
      </label>
      <div className="inline">
        <input
          id={fieldId}
          className="mono"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit" className="btn btn-primary" disabled={busy}>
          Send input
        </button>
      </div>
      {error !== undefined ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}

export function ResolveForm({ run, step, onDone }: { run: Run; step: Step; onDone: () => void }) {
  const [result, setResult] = useState('null');
  const [message, setMessage] = useState('marked failed by an operator');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const resolve = async (action: 'retry' | 'succeeded' | 'failed') => {
    let body: Parameters<typeof runsApi.resolve>[2] = { action };
    if (action === 'succeeded') {
      const parsed = parseJson(result);
      if (!parsed.ok) return setError('The result must be JSON.');
      body = { action, result: parsed.value };
    }
    if (action === 'failed') body = { action, error: { message } };
    if (
      action === 'retry' &&
      !window.confirm(
        `Run ${step.name} again? It is a ${step.effectClass ?? 'side-effect'} tool: it may have run already.`,
      )
    )
      return;
    setBusy(true);
    setError(undefined);
    try {
      await runsApi.resolve(run.id, step.executionId!, body);
      onDone();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="action-form" data-testid="resolve-form" data-execution-id={step.executionId}>
      <p>
        <strong>{step.name}</strong> (effect #{step.seq}, execution <code>{step.executionId}</code>)
        may or may not have run. Check the downstream system, then decide.
      </p>
      <div className="inline">
        <button type="button" className="btn" disabled={busy} onClick={() => void resolve('retry')}>
          Retry
        </button>
        <label className="sr-only" htmlFor={`result-${step.seq}`}>
          Result (JSON)
        </label>
        <input
          id={`result-${step.seq}`}
          className="mono"
          value={result}
          onChange={(e) => setResult(e.target.value)}
          aria-describedby={`result-help-${step.seq}`}
        />
        <button
          type="button"
          className="btn btn-primary"
          disabled={busy}
          onClick={() => void resolve('succeeded')}
        >
          Mark succeeded
        </button>
        <label className="sr-only" htmlFor={`fail-${step.seq}`}>
          Failure message
        </label>
        <input
          id={`fail-${step.seq}`}
          value={message}
          onChange={(e) => setMessage(e.target.value)}
        />
        <button
          type="button"
          className="btn btn-danger"
          disabled={busy}
          onClick={() => void resolve('failed')}
        >
          Mark failed
        </button>
      </div>
      <p id={`result-help-${step.seq}`} className="muted small">
        “Mark succeeded” returns the JSON result to the agent as the tool’s output.
      </p>
      {error !== undefined ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
