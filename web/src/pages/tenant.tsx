// Tenant: the signed-in tenant's usage (runs by status, tokens, spend), cost per successful run per
// agent, and its quotas when the scheduling plane reports them.
import { Link } from 'react-router';
import { dashboardApi } from '../api.ts';
import { LiveDot, Notice, PageHeader, Panel, Stat } from '../components/ui.tsx';
import { formatCount, formatUsd, sentence } from '../format.ts';
import { usePolling } from '../hooks.ts';

const REFRESH_MS = 5_000;

export function TenantPage() {
  const { data, error } = usePolling(() => dashboardApi.tenant(), REFRESH_MS, 'tenant');
  if (data === undefined)
    return error !== undefined ? (
      <Notice tone="error" title="Could not load the tenant">
        {error.message}
      </Notice>
    ) : (
      <p className="empty">Loading…</p>
    );
  const { totals, usage, quotas } = data;
  const live =
    (totals.byStatus.queued ?? 0) +
    (totals.byStatus.running ?? 0) +
    (totals.byStatus.waiting ?? 0) +
    (totals.byStatus.cancelling ?? 0);
  const ended =
    (totals.byStatus.succeeded ?? 0) +
    (totals.byStatus.failed ?? 0) +
    (totals.byStatus.cancelled ?? 0);
  return (
    <>
      <PageHeader
        title={`Tenant ${data.tenant.name}`}
        subtitle={<span className="mono">{data.tenant.id}</span>}
        actions={<LiveDot state="polling" />}
      />
      <div className="stats" data-testid="tenant-stats">
        <Stat
          label="Runs"
          value={formatCount(totals.runs)}
          hint={`${formatCount(live)} in flight`}
        />
        <Stat
          label="Succeeded"
          value={formatCount(totals.succeeded)}
          hint={
            ended > 0
              ? `${((totals.succeeded / ended) * 100).toFixed(1)}% of ended runs`
              : 'no run ended yet'
          }
        />
        <Stat
          label="Failed"
          value={formatCount(totals.byStatus.failed ?? 0)}
          hint={`${formatCount(totals.byStatus.cancelled ?? 0)} cancelled`}
        />
        <Stat
          label="Tokens"
          value={formatCount(totals.inputTokens + totals.outputTokens)}
          hint={`${formatCount(totals.inputTokens)} in · ${formatCount(totals.outputTokens)} out`}
        />
        <Stat
          label="Spend"
          value={formatUsd(totals.costUsd)}
          hint="all runs, failed ones included"
        />
        <Stat
          label="Cost per success"
          value={formatUsd(totals.costPerSuccessUsd)}
          hint="all spend ÷ successful runs"
          testId="cost-per-success"
        />
      </div>
      <Panel title="Usage by agent" id="usage">
        <div className="table-wrap">
          <table className="table" data-testid="usage-table">
            <thead>
              <tr>
                <th>Agent</th>
                <th className="num">Runs</th>
                <th className="num">Queued</th>
                <th className="num">Running</th>
                <th className="num">Waiting</th>
                <th className="num">Succeeded</th>
                <th className="num">Failed</th>
                <th className="num">Cancelled</th>
                <th className="num">Tokens</th>
                <th className="num">Spend</th>
                <th className="num">Cost / success</th>
              </tr>
            </thead>
            <tbody>
              {usage.map((u) => (
                <tr key={u.agent}>
                  <td>
                    <Link to={`/runs?agent=${encodeURIComponent(u.agent)}`}>{u.agent}</Link>
                  </td>
                  <td className="num">{formatCount(u.runs)}</td>
                  {(
                    ['queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'] as const
                  ).map((s) => (
                    <td key={s} className="num">
                      {formatCount(u.byStatus[s] ?? 0)}
                    </td>
                  ))}
                  <td className="num">{formatCount(u.inputTokens + u.outputTokens)}</td>
                  <td className="num">{formatUsd(u.costUsd)}</td>
                  <td className="num">{formatUsd(u.costPerSuccessUsd)}</td>
                </tr>
              ))}
              {usage.length === 0 ? (
                <tr>
                  <td colSpan={11} className="empty">
                    No runs yet.
                  </td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
      </Panel>
      <Panel title="Quotas" id="quotas">
        {quotas.available ? (
          <div className="stats">
            <Stat
              label="Concurrent runs"
              value={quotas.maxConcurrentRuns ?? 'unlimited'}
              hint={`${formatCount(totals.byStatus.running ?? 0)} running now`}
            />
            <Stat label="Requests / min" value={quotas.requestsPerMinute ?? 'unlimited'} />
            <Stat label="Tokens / min" value={quotas.tokensPerMinute ?? 'unlimited'} />
            <Stat label="Fair-share weight" value={quotas.weight ?? 1} />
          </div>
        ) : (
          <Notice title="No quotas to show" tone="info">
            {sentence(quotas.reason)}
          </Notice>
        )}
      </Panel>
    </>
  );
}
