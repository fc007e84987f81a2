import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Cron } from 'croner';
import fc from 'fast-check';
import { FireTimes, type FireRule } from './fire-times.ts';
import { offsetAt, wallClock } from './time-zone.ts';

const rule = (cron: string, timeZone: string, extra: Partial<FireRule> = {}): FireRule => ({
  cron,
  intervalMs: null,
  timeZone,
  startAt: null,
  endAt: null,
  anchorAt: 0,
  ...extra,
});
const iso = (times: number[]) => times.map((t) => new Date(t).toISOString());
const fires = (cron: string, zone: string, from: string, until: string) =>
  iso(new FireTimes(rule(cron, zone)).between(Date.parse(from), Date.parse(until), 100));

test('spring forward, America/New_York: a daily 02:30 fires at 03:00 EDT, the gap end', () => {
  assert.deepEqual(
    fires('30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', '2026-03-09T12:00:00Z'),
    ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'],
  );
});

test('spring forward, America/New_York: an interval expression inside the gap fires once at the gap end', () => {
  assert.deepEqual(
    fires('*/15 2 * * *', 'America/New_York', '2026-03-08T06:00:00Z', '2026-03-08T12:00:00Z'),
    ['2026-03-08T07:00:00.000Z'],
  );
  assert.deepEqual(
    fires('*/30 * * * *', 'America/New_York', '2026-03-08T06:15:00Z', '2026-03-08T07:45:00Z'),
    ['2026-03-08T06:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-08T07:30:00.000Z'],
  );
});

test('fall back, America/New_York: a repeated 01:30 fires once, at the first (EDT) occurrence', () => {
  assert.deepEqual(
    fires('30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z'),
    ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'],
  );
  // hourly: 01:00 EDT fires, 01:00 EST (a repeat) does not, 02:00 EST does
  assert.deepEqual(
    fires('0 * * * *', 'America/New_York', '2026-11-01T04:30:00Z', '2026-11-01T07:30:00Z'),
    ['2026-11-01T05:00:00.000Z', '2026-11-01T07:00:00.000Z'],
  );
});

test('Europe/Berlin: 02:30 does not exist on 29 March (fires 03:00 CEST) and occurs twice on 25 October (fires once, CEST)', () => {
  assert.deepEqual(
    fires('30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', '2026-03-30T12:00:00Z'),
    ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
  );
  assert.deepEqual(
    fires('30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z'),
    ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'],
  );
  assert.deepEqual(
    fires('*/30 * * * *', 'Europe/Berlin', '2026-10-24T23:45:00Z', '2026-10-25T02:15:00Z'),
    ['2026-10-25T00:00:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T02:00:00.000Z'],
  );
});

test('Australia/Sydney: both transitions (April back, October forward)', () => {
  assert.deepEqual(
    fires('30 2 * * *', 'Australia/Sydney', '2026-04-04T12:00:00Z', '2026-04-05T12:00:00Z'),
    ['2026-04-04T15:30:00.000Z'],
  );
  assert.deepEqual(
    fires('30 2 * * *', 'Australia/Sydney', '2026-10-03T12:00:00Z', '2026-10-04T12:00:00Z'),
    ['2026-10-03T16:00:00.000Z'],
  );
});

test('six fields fire every second; start and end bound the fires; intervals count from their anchor', () => {
  assert.deepEqual(fires('*/20 * * * * *', 'UTC', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z'), [
    '2026-01-01T00:00:20.000Z',
    '2026-01-01T00:00:40.000Z',
    '2026-01-01T00:01:00.000Z',
  ]);
  const bounded = new FireTimes(
    rule('0 * * * *', 'UTC', {
      startAt: Date.parse('2026-01-01T02:00:00Z'),
      endAt: Date.parse('2026-01-01T04:00:00Z'),
    }),
  );
  assert.deepEqual(iso(bounded.between(0, Date.parse('2026-02-01T00:00:00Z'), 10)), [
    '2026-01-01T02:00:00.000Z',
    '2026-01-01T03:00:00.000Z',
    '2026-01-01T04:00:00.000Z',
  ]);
  const interval = new FireTimes({
    cron: null,
    intervalMs: 90_000,
    timeZone: 'UTC',
    startAt: null,
    endAt: null,
    anchorAt: 1_000,
  });
  assert.deepEqual(interval.between(0, 200_000, 10), [1_000, 91_000, 181_000]);
});

const assertKeelError = (fn: () => unknown, code: string) =>
  assert.throws(fn, (e: { code?: string }) => e.code === code);

test('bad rules are typed errors', () => {
  assertKeelError(() => new FireTimes(rule('61 * * * *', 'UTC')), 'invalid_cron');
  assertKeelError(() => new FireTimes(rule('* * * * * * *', 'UTC')), 'invalid_cron');
  assertKeelError(() => new FireTimes(rule('0 0 30 2 *', 'UTC')), 'invalid_cron');
  assertKeelError(() => new FireTimes(rule('* * * * *', 'Mars/Olympus')), 'invalid_time_zone');
  assertKeelError(() => new FireTimes(rule('* * * * *', '+05:00')), 'invalid_time_zone');
});

test('property: fire times increase, never repeat a wall-clock time, and each matches the pattern or ends a DST gap', () => {
  const zones = [
    'America/New_York',
    'Europe/Berlin',
    'Australia/Sydney',
    'Australia/Lord_Howe',
    'Asia/Kolkata',
    'America/Santiago',
  ];
  const field = (max: number) =>
    fc.oneof(
      fc.constant('*'),
      fc.integer({ min: 0, max }).map(String),
      fc.integer({ min: 2, max: Math.min(max, 30) }).map((k) => `*/${k}`),
    );
  fc.assert(
    fc.property(
      fc.constantFrom(...zones),
      field(59),
      field(23),
      // Starts shortly before the 2026 transitions of these zones, so most cases walk through a gap
      // or a repeated hour.
      fc.constantFrom(
        '2026-03-08',
        '2026-11-01',
        '2026-03-29',
        '2026-10-25',
        '2026-04-05',
        '2026-10-04',
        '2026-09-06',
      ),
      fc.integer({ min: 0, max: 36 * 3600 }),
      (zone, minute, hour, day, secondsBefore) => {
        const start = Date.parse(`${day}T12:00:00Z`) - secondsBefore * 1000;
        const cron = `${minute} ${hour} * * *`;
        const times = new FireTimes(rule(cron, zone));
        const wall = new Cron(cron, { timezone: 'UTC', paused: true });
        let previous = start;
        const walls = new Set<number>();
        for (let i = 0; i < 40; i++) {
          const t = times.next(previous);
          assert.ok(
            t !== null && t > previous,
            `${cron} ${zone}: not increasing after ${new Date(previous).toISOString()}`,
          );
          const w = wallClock(t, zone);
          assert.ok(
            !walls.has(w),
            `${cron} ${zone}: wall time ${new Date(w).toISOString()} fired twice`,
          );
          walls.add(w);
          const matches = wall.nextRun(new Date(w - 1))?.getTime() === w;
          const gapEnd = offsetAt(t - 1, zone) < offsetAt(t, zone);
          assert.ok(
            matches || gapEnd,
            `${cron} ${zone}: ${new Date(t).toISOString()} neither matches nor ends a gap`,
          );
          previous = t;
        }
      },
    ),
    { numRuns: 300 },
  );
});
