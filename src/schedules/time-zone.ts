// IANA time zones: validation and the wall clock of an instant in a zone (for the daylight-saving
// rules of fire-times.ts). Uses the runtime's Intl time zone data; never the server's own zone.
import { KeelError } from '../domain/keel-error.ts';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * Accepts IANA names (`Europe/Berlin`, `UTC`); refuses fixed offsets (`+05:00`), which have no
 * daylight saving rules to honour.
 */
export function assertTimeZone(zone: string): void {
  if (/^[+-]/.test(zone) || zone.length > 64)
    throw new KeelError(
      'invalid_time_zone',
      `${JSON.stringify(zone)} is not an IANA time zone name (e.g. Europe/Berlin)`,
    );
  try {
    formatter(zone);
  } catch (error) {
    throw new KeelError(
      'invalid_time_zone',
      `${JSON.stringify(zone)} is not an IANA time zone name (e.g. Europe/Berlin)`,
      { cause: error },
    );
  }
}

/**
 * The wall-clock time of `instant` in `zone`, as milliseconds of the same fields read as UTC (whole
 * seconds).
 */
export function wallClock(instant: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return Date.UTC(
    parts.year!,
    parts.month! - 1,
    parts.day!,
    parts.hour!,
    parts.minute!,
    parts.second!,
  );
}

/** The zone's UTC offset at `instant`, in milliseconds (east positive). */
export function offsetAt(instant: number, zone: string): number {
  const whole = instant - (((instant % 1000) + 1000) % 1000);
  return wallClock(whole, zone) - whole;
}
