// Display helpers: durations, relative times, money, short ids. Pure and locale-stable (en-US), so
// screenshots and tests read the same everywhere.

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000)
    return units(Math.floor(ms / 60_000), 'm', Math.floor((ms % 60_000) / 1000), 's');
  if (ms < 86_400_000)
    return units(Math.floor(ms / 3_600_000), 'h', Math.floor((ms % 3_600_000) / 60_000), 'm');
  return units(Math.floor(ms / 86_400_000), 'd', Math.floor((ms % 86_400_000) / 3_600_000), 'h');
}

/** "1h 5m", or "1h" when the minor unit is zero. */
function units(major: number, majorUnit: string, minor: number, minorUnit: string): string {
  return minor === 0 ? `${major}${majorUnit}` : `${major}${majorUnit} ${minor}${minorUnit}`;
}

export function formatAgo(iso: string | null, now = Date.now()): string {
  if (iso === null) return '—';
  const ms = now - Date.parse(iso);
  return ms < 5_000 ? 'just now' : `${formatDuration(ms)} ago`;
}

export function formatTime(iso: string | null): string {
  if (iso === null) return '—';
  const time = new Date(iso).toLocaleTimeString('en-US', {
    hour12: false,
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  return `${time}.${String(new Date(iso).getMilliseconds()).padStart(3, '0')}`;
}

export function formatDateTime(iso: string | null): string {
  if (iso === null) return '—';
  return new Date(iso).toLocaleString('en-US', {
    hour12: false,
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

export function formatUsd(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return '—';
  if (usd === 0) return '$0';
  return usd < 0.01 ? `$${usd.toFixed(5)}` : `$${usd.toFixed(usd < 10 ? 4 : 2)}`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * The distinctive tail of a time-ordered id (its head is the timestamp, the same for runs made
 * together).
 */
export function shortId(id: string): string {
  const bare = id.replace(/^run_/, '').replaceAll('-', '');
  return bare.length > 12 ? bare.slice(-12) : bare;
}

export function preview(value: unknown, max = 120): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A server's lower-case reason as a sentence: capitalised, with a full stop. */
export function sentence(text: string): string {
  const t = text.trim();
  return t.length === 0 ? t : `${t[0]!.toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
}
