// Runs: the tenant's runs newest first, filtered by status and agent (kept in the URL), refreshed
// every few seconds; a form to start a run; each row links to the run page and, for a rerun, reset
// or fork, to the run it came from.
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { RUN_STATUSES, runsApi, type Run } from '../api.ts';
import { LiveDot, Notice, PageHeader, StatusBadge } from '../components/ui.tsx';
import { formatAgo, formatDuration, formatUsd, shortId } from '../format.ts';
import { useNow, usePolling } from '../hooks.ts';
import { useTenant } from '../tenant-context.ts';
import { LineageTag } from './run-lineage.tsx';

const REFRESH_MS = 2_000;
const PAGE_SIZE = 50;

export function RunsPage() {
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? '';
  const agent = params.get('agent') ?? '';
  const [pages, setPages] = useState(1);
  const now = useNow(1_000);
  const runs = usePolling(
    async () => {
      // The first `pages` pages, re-read on every refresh so statuses stay live.
      const all: Run[] = [];
      let cursor: string | undefined;
      let next: string | null = null;
      for (let i = 0; i < pages; i++) {
        const page = await runsApi.list({
          status,
          agent,
          limit: PAGE_SIZE,
          ...(cursor !== undefined ? { cursor } : {}),
        });
        all.push(...page.runs);
        next = page.nextCursor;
        if (next === null) break;
        cursor = next;
      }
      return { runs: all, more: next !== null };
    },
    REFRESH_MS,
    `${status}|${agent}|${pages}`,
  );

  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value === '') next.delete(name);
    else next.set(name, value);
    setParams(next, { replace: true });
    setPages(1);
  };

  return (
    <>
      <PageHeader
        title="Runs"
        subtitle="Every task submitted by this tenant, newest first."
        actions={<LiveDot state="polling" />}
      />
      <NewRunForm />
      {/* biome-ignore lint/a11y/useSemanticElements: a <div> with role search keeps the toolbar layout; <search> is not styled everywhere yet. */}
      <div className="toolbar" role="search">
        <label>
          Status
          <select
            value={status}
            onChange={(e) => setFilter('status', e.target.value)}
            data-testid="filter-status"
          >
            <option value="">All statuses</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        {/* biome-ignore lint/a11y/noLabelWithoutControl: AgentSelect renders the <select> this label wraps. */}
        <label>
          Agent
          <AgentSelect value={agent} onChange={(v) => setFilter('agent', v)} allowAll />
        </label>
        <GoToRun />
      </div>
      {runs.error !== undefined ? (
        <Notice tone="error" title="Could not load runs">
          {runs.error.message}
        </Notice>
      ) : null}
      <div className="table-wrap">
        <table className="table" data-testid="runs-table">
          <thead>
            <tr>
              <th>Run</th>
              <th>Agent</th>
              <th>Status</th>
              <th className="num">Steps</th>
              <th className="num">Tokens</th>
              <th className="num">Cost</th>
              <th>Created</th>
              <th className="num">Duration</th>
            </tr>
          </thead>
          <tbody>
            {runs.data?.runs.map((run) => (
              <RunRow key={run.id} run={run} now={now} />
            ))}
            {runs.data !== undefined && runs.data.runs.length === 0 ? (
              <tr>
                <td colSpan={8} className="empty">
                  No runs{status !== '' || agent !== '' ? ' match these filters' : ' yet'}.
                </td>
              </tr>
            ) : null}
            {runs.data === undefined && runs.loading ? (
              <tr>
                <td colSpan={8} className="empty">
                  Loading…
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      {runs.data?.more === true ? (
        <button type="button" className="btn" onClick={() => setPages((p) => p + 1)}>
          Load more
        </button>
      ) : null}
    </>
  );
}

function RunRow({ run, now }: { run: Run; now: number }) {
  const end = run.endedAt !== null ? Date.parse(run.endedAt) : now;
  return (
    <tr data-run-id={run.id} data-status={run.status} data-agent={run.agent}>
      <td>
        <Link to={`/runs/${run.id}`} className="mono" title={run.id}>
          {shortId(run.id)}
        </Link>{' '}
        <LineageTag run={run} />
      </td>
      <td>
        {run.agent}
        <span className="muted">@{run.agentVersion}</span>
      </td>
      <td>
        <StatusBadge status={run.status} />
        {run.waitingReason !== null ? (
          <span className="muted small"> {run.waitingReason}</span>
        ) : null}
      </td>
      <td className="num">{run.counters.steps}</td>
      <td className="num">
        {(run.counters.inputTokens + run.counters.outputTokens).toLocaleString('en-US')}
      </td>
      <td className="num">{formatUsd(run.counters.costUsd)}</td>
      <td title={run.createdAt}>{formatAgo(run.createdAt, now)}</td>
      <td className="num">{formatDuration(end - Date.parse(run.createdAt))}</td>
    </tr>
  );
}

export function AgentSelect({
  value,
  onChange,
  allowAll,
  id,
}: {
  value: string;
  onChange: (v: string) => void;
  allowAll?: boolean;
  id?: string;
}) {
  const tenant = useTenant();
  const names = [...new Set(tenant?.agents.map((a) => a.name) ?? [])].sort();
  return (
    <select
      id={id}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      data-testid={allowAll === true ? 'filter-agent' : 'new-run-agent'}
    >
      {allowAll === true ? <option value="">All agents</option> : null}
      {names.map((n) => (
        <option key={n} value={n}>
          {n}
        </option>
      ))}
    </select>
  );
}

function GoToRun() {
  const navigate = useNavigate();
  const [id, setId] = useState('');
  return (
    <form
      className="goto"
      onSubmit={(e) => {
        e.preventDefault();
        if (id.trim() !== '') navigate(`/runs/${id.trim()}`);
      }}
    >
      <label>
        Open run
        <input
          value={id}
          onChange={(e) => setId(e.target.value)}
          placeholder="run_…"
          className="mono"
        />
      </label>
      <button type="submit" className="btn">
        Open
      </button>
    </form>
  );
}

function NewRunForm() {
  const tenant = useTenant();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [agent, setAgent] = useState('');
  const [input, setInput] = useState('{}');
  const [error, setError] = useState<string>();
  const chosen = agent !== '' ? agent : (tenant?.agents[0]?.name ?? '');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    let value: unknown;
    try {
      value = input.trim() === '' ? null : JSON.parse(input);
    } catch {
      return setError('Input must be JSON.');
    }
    try {
      const run = await runsApi.create(chosen, value);
      navigate(`/runs/${run.id}`);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  if (!open)
    return (
      <button
        type="button"
        className="btn btn-primary new-run-toggle"
        onClick={() => setOpen(true)}
      >
        New run
      </button>
    );
  return (
    <form className="panel new-run" onSubmit={submit} aria-label="New run">
      <div className="form-row">
        <label htmlFor="new-run-agent">Agent</label>
        <AgentSelect id="new-run-agent" value={chosen} onChange={setAgent} />
      </div>
      <div className="form-row">
        <label htmlFor="new-run-input">Input (JSON)</label>
        <textarea
          id="new-run-input"
          className="mono"
          rows={3}
          value={input}
          onChange={(e) => setInput(e.target.value)}
        />
      </div>
      {error !== undefined ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={chosen === ''}>
          Start run
        </button>
        <button type="button" className="btn btn-ghost" onClick={() => setOpen(false)}>
          Close
        </button>
      </div>
    </form>
  );
}
