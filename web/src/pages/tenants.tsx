// Tenants (operator view, admin key): every tenant's runs by status, tokens, spend, cost per
// success and quotas.
import { dashboardApi, type TenantRow } from '../api.ts';
import { LiveDot, Notice, PageHeader, Stat } from '../components/ui.tsx';
import { formatCount, formatDateTime, formatDuration, formatUsd } from '../format.ts';
import { usePolling } from '../hooks.ts';

const REFRESH_MS = 5_000;

export function TenantsPage() {
  const { data, error } = usePolling(() => dashboardApi.allTenants(), REFRESH_MS, 'tenants');
  if (data === undefined)
    return error !== undefined ? (
      <Notice tone="error" title="Could not load tenants">
        {error.message}
      </Notice>
    ) : (
      <p className="empty">Loading…</p>
    );
  const { tenants } = data;
  const sum = (pick: (t: TenantRow) => number) => tenants.reduce((n, t) => n + pick(t), 0);
  const spend = sum((t) => t.costUsd);
  const succeeded = sum((t) => t.succeeded);
  const live = sum(
    (t) => (t.byStatus.queued ?? 0) + (t.byStatus.running ?? 0) + (t.byStatus.waiting ?? 0),
  );
  return (
    <>
      <PageHeader
        title="Tenants"
        subtitle="Usage and cost of every tenant on this Keel (operator view)."
        actions={<LiveDot state="polling" />}
      />
      <div className="stats">
        <Stat label="Tenants" value={formatCount(data.tenants.length)} />
        <Stat label="Runs in flight" value={formatCount(live)} hint="queued, running or waiting" />
        <Stat label="Spend" value={formatUsd(spend)} hint="all tenants, all runs" />
        <Stat
          label="Cost per success"
          value={formatUsd(succeeded === 0 ? null : spend / succeeded)}
          hint="all spend ÷ successful runs"
        />
      </div>
      <div className="table-wrap">
        <table className="table" data-testid="tenants-table">
          <thead>
            <tr>
              <th>Tenant</th>
              <th>Created</th>
              <th className="num">Runs</th>
              <th className="num">Queued</th>
              <th className="num">Oldest queued</th>
              <th className="num">Running</th>
              <th className="num">Waiting</th>
              <th className="num">Succeeded</th>
              <th className="num">Failed</th>
              <th className="num">Tokens</th>
              <th className="num">Spend</th>
              <th className="num">Cost / success</th>
              <th>Quota</th>
            </tr>
          </thead>
          <tbody>
            {data.tenants.map((t) => (
              <tr key={t.id} data-tenant={t.name}>
                <td>
                  <strong>{t.name}</strong>{' '}
                  <span className="muted mono small">{t.id.slice(-8)}</span>
                </td>
                <td>{formatDateTime(t.createdAt)}</td>
                <td className="num">{formatCount(t.runs)}</td>
                <td className="num">{formatCount(t.byStatus.queued ?? 0)}</td>
                <td className="num">{formatDuration(t.oldestQueuedAgeMs)}</td>
                {(['running', 'waiting', 'succeeded', 'failed'] as const).map((s) => (
                  <td key={s} className="num">
                    {formatCount(t.byStatus[s] ?? 0)}
                  </td>
                ))}
                <td className="num">{formatCount(t.inputTokens + t.outputTokens)}</td>
                <td className="num">{formatUsd(t.costUsd)}</td>
                <td className="num" data-testid="tenant-cost-per-success">
                  {formatUsd(t.costPerSuccessUsd)}
                </td>
                <td>
                  {t.quotas.available ? (
                    `${t.quotas.maxConcurrentRuns ?? '∞'} concurrent · weight ${t.quotas.weight ?? 1}`
                  ) : (
                    <span className="muted small">not configured</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="muted small">
        Runs are visible only with a tenant's own key: sign out and sign in with it to see them.
      </p>
    </>
  );
}
