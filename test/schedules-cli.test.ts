// `keel schedules …` against a real Keel over HTTP: create, list, get, update, pause/resume,
// trigger, fires, backfill, delete, and the exit codes for usage errors (2) and API errors (1).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSchedulesCommand } from '../src/cli/client/schedules-command.ts';
import { scheduleAgents } from './fixtures/schedule-agents.ts';
import { startSchedulesKeel } from './support/schedules-keel.ts';
import { captureCli } from './support/cli-capture.ts';

test('keel schedules: the whole life of a schedule from the command line', async (t) => {
  const keel = await startSchedulesKeel({ agents: scheduleAgents, start: '2026-01-01T00:00:30Z' });
  t.after(() => keel.close());
  const cli = (...argv: string[]) =>
    captureCli(runSchedulesCommand, { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey }, argv);

  const created = await cli(
    'create',
    '--agent',
    'quick',
    '--cron',
    '*/5 * * * *',
    '--tz',
    'Europe/Berlin',
    '--input',
    '{"n":1}',
    '--name',
    'five',
    '--overlap',
    'buffer_one',
    '--catchup-ms',
    '600000',
    '--json',
  );
  assert.equal(created.code, 0, created.err);
  const s = JSON.parse(created.out);
  assert.deepEqual(
    [s.cron, s.timeZone, s.overlap, s.template.input, s.nextFireAt],
    ['*/5 * * * *', 'Europe/Berlin', 'buffer_one', { n: 1 }, '2026-01-01T00:05:00.000Z'],
  );

  const listed = await cli('list');
  assert.equal(listed.code, 0);
  assert.match(
    listed.out,
    new RegExp(`${s.id}\\s+five\\s+\\*/5 \\* \\* \\* \\*\\s+Europe/Berlin\\s+false`),
  );
  assert.match((await cli('get', s.id)).out, /overlap\s+buffer_one/);

  const updated = await cli('update', s.id, '--agent', 'quick', '--input', '{"n":2}', '--json');
  assert.equal(JSON.parse(updated.out).version, 2);
  const unchanged = await cli('update', s.id);
  assert.equal(
    unchanged.code,
    2,
    'an update with no option is a usage error, refused before the request',
  );
  assert.match(unchanged.err, /nothing to change/);
  assert.equal(JSON.parse((await cli('get', s.id, '--json')).out).version, 2);

  assert.equal((await cli('pause', s.id)).out.trim(), `paused ${s.id}`);
  assert.match((await cli('resume', s.id)).out, /^resumed /);
  assert.match((await cli('trigger', s.id)).out, /requested a fire at 2026-01-01T00:00:30.000Z/);
  await keel.tickAt('2026-01-01T00:05:00Z');
  const fires = await cli('fires', s.id);
  assert.equal(fires.code, 0);
  assert.match(
    fires.out,
    /2026-01-01T00:05:00.000Z\s+scheduled\s+buffered\s+-\s+2/,
    "buffer_one: the trigger's run is still active",
  );
  assert.match(fires.out, /2026-01-01T00:00:30.000Z\s+trigger\s+started\s+run_\S+\s+2/);
  const events = await cli('events', s.id);
  assert.match(events.out, /\d+\s+\S+ \S+\s+fire\.started\s+2026-01-01T00:00:30.000Z\s+run_/);
  assert.match(events.out, /fire\.buffered\s+2026-01-01T00:05:00.000Z\s+-/);
  const backfill = await cli(
    'backfill',
    s.id,
    '--from',
    '2026-01-01T00:00:00Z',
    '--to',
    '2026-01-01T00:05:00Z',
  );
  assert.equal(backfill.out.trim(), '1 of 2 fires requested (the others ran already)');

  const usage = await cli('backfill', s.id);
  assert.equal(usage.code, 2);
  assert.match(usage.err, /needs --from/);
  assert.equal((await cli('bogus')).code, 2);
  const bad = await cli('create', '--agent', 'quick', '--cron', '* * *', '--tz', 'UTC');
  assert.equal(bad.code, 1);
  assert.match(bad.err, /invalid_cron/);
  assert.equal((await cli('delete', s.id)).out.trim(), `deleted ${s.id}`);
  const gone = await cli('get', s.id);
  assert.equal(gone.code, 1);
  assert.match(gone.err, /schedule_not_found/);
});
