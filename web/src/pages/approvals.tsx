// Pending approvals: every tool call of the tenant's runs that waits for a human, newest first, with
// the call to decide on (tool, risk, arguments, run, agent, why the policy asked, when it expires)
// and Approve / Deny buttons. A decision is bound to the arguments shown (their hash).
import { useState } from 'react';
import { Link } from 'react-router';
import { approvalsApi, type Approval } from '../api.ts';
import { LiveDot, Notice, PageHeader, Panel } from '../components/ui.tsx';
import { formatAgo, formatDateTime, shortId } from '../format.ts';
import { usePolling } from '../hooks.ts';

const REFRESH_MS = 3_000;

function ApprovalCard({ approval, onDone }: { approval: Approval; onDone: () => void }) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const noteId = `note-${approval.executionId}`;

  const decide = async (decision: 'approve' | 'deny') => {
    setBusy(true);
    setError(undefined);
    try {
      await approvalsApi.decide(approval, decision, note);
      onDone();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <li
      className="approval"
      data-testid="approval"
      data-execution-id={approval.executionId}
      aria-label={`${approval.tool} call of run ${approval.runId}`}
    >
      <div className="inline">
        <strong className="mono">{approval.tool}</strong>
        <span className={`badge risk-${approval.risk}`}>{approval.risk} risk</span>
        <span className="muted small">
          run{' '}
          <Link to={`/runs/${approval.runId}`} className="mono">
            {shortId(approval.runId)}
          </Link>{' '}
          · agent <span className="mono">{approval.agent}</span> · asked{' '}
          {formatAgo(approval.requestedAt)} · expires {formatDateTime(approval.expiresAt)}
        </span>
      </div>
      <p className="small">{approval.reason}</p>
      <pre className="json" data-testid="approval-args">
        {JSON.stringify(approval.args, null, 2)}
      </pre>
      <label htmlFor={noteId} className="small">
        Note <span className="muted">(optional, kept with the decision)</span>
      </label>
      <div className="inline">
        <input id={noteId} value={note} onChange={(e) => setNote(e.target.value)} />
        <button
          type="button"
          className="btn btn-primary"
          disabled={busy}
          onClick={() => decide('approve')}
        >
          Approve
        </button>
        <button type="button" className="btn" disabled={busy} onClick={() => decide('deny')}>
          Deny
        </button>
      </div>
      {error !== undefined ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </li>
  );
}

export function ApprovalsPage() {
  const { data, error, refresh } = usePolling(
    (signal) => approvalsApi.pending(signal),
    REFRESH_MS,
    'approvals',
  );
  return (
    <>
      <PageHeader
        title="Approvals"
        subtitle="Tool calls waiting for a human decision, across runs."
        actions={<LiveDot state="polling" />}
      />
      {error !== undefined ? (
        <Notice tone="error" title="Could not load approvals">
          {error.message}
        </Notice>
      ) : null}
      {data === undefined ? null : data.approvals.length === 0 ? (
        <div className="empty-state" data-testid="approvals-empty">
          <h2>Nothing waits for approval</h2>
          <p className="muted">
            Calls appear here when a tool policy marks them <code>approval: required</code>.
          </p>
        </div>
      ) : (
        <Panel title={`${data.approvals.length} pending`}>
          <ul className="approvals">
            {data.approvals.map((a) => (
              <ApprovalCard key={a.executionId} approval={a} onDone={refresh} />
            ))}
          </ul>
        </Panel>
      )}
    </>
  );
}
