// Small presentational pieces shared by the pages: status badges, stat tiles, notices, page
// headers.
import type { ReactNode } from 'react';

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge status-${status}`} data-status={status}>
      {status}
    </span>
  );
}

export function Stat({
  label,
  value,
  hint,
  testId,
}: {
  label: string;
  value: ReactNode;
  hint?: ReactNode;
  testId?: string;
}) {
  return (
    <div className="stat" data-testid={testId}>
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {hint !== undefined ? <div className="stat-hint">{hint}</div> : null}
    </div>
  );
}

export function Notice({
  tone = 'info',
  title,
  children,
}: {
  tone?: 'info' | 'warn' | 'error';
  title?: string;
  children: ReactNode;
}) {
  return (
    <div className={`notice notice-${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {title !== undefined ? <strong>{title}</strong> : null}
      <div>{children}</div>
    </div>
  );
}

export function PageHeader({
  title,
  subtitle,
  actions,
}: {
  title: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle !== undefined ? <p className="subtitle">{subtitle}</p> : null}
      </div>
      {actions !== undefined ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}

export function Panel({
  title,
  actions,
  children,
  id,
}: {
  title: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  id?: string;
}) {
  const headingId = id !== undefined ? `${id}-title` : undefined;
  return (
    <section className="panel" aria-labelledby={headingId} id={id}>
      <div className="panel-head">
        <h2 id={headingId}>{title}</h2>
        {actions}
      </div>
      <div className="panel-body">{children}</div>
    </section>
  );
}

export function LiveDot({
  state,
}: {
  state: 'live' | 'connecting' | 'retrying' | 'ended' | 'polling';
}) {
  const label = {
    live: 'Live',
    connecting: 'Connecting…',
    retrying: 'Reconnecting…',
    ended: 'Ended',
    polling: 'Auto-refresh',
  }[state];
  return (
    <span className={`live-dot live-${state}`} data-testid="live-state" data-state={state}>
      <i aria-hidden="true" />
      {label}
    </span>
  );
}
