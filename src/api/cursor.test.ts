// Pagination cursors: what encodeCursor issues, decodeCursor returns unchanged; anything else is a
// KeelError `invalid_cursor` (400), never another exception (a 500) and never a run id that was not
// in the cursor. The schedule and fire lists' cursors hold their own kind of position, checked the
// same way.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RUN_ID_PATTERN, newRunId } from '../domain/ids.ts';
import { isKeelError } from '../domain/keel-error.ts';
import { ListRunsQuery } from './schemas.ts';
import { decodeCursor, decodeCursorOf, encodeCursor, isEpochMs, isScheduleId } from './cursor.ts';

const b64url = (text: string): string => Buffer.from(text).toString('base64url');
const cursorOf = (value: unknown): string => b64url(JSON.stringify(value));

function assertInvalid(cursor: string): void {
  assert.throws(
    () => decodeCursor(cursor),
    (error: unknown) => {
      assert.ok(
        isKeelError(error),
        `expected a KeelError for ${JSON.stringify(cursor)}, got ${String(error)}`,
      );
      assert.equal(error.code, 'invalid_cursor');
      assert.equal(error.status, 400);
      return true;
    },
  );
}

describe('encodeCursor / decodeCursor', () => {
  it('round-trips run ids', () => {
    for (let i = 0; i < 50; i++) {
      const id = newRunId();
      assert.equal(decodeCursor(encodeCursor(id)), id);
    }
  });

  it('issues URL-safe cursors that fit the API’s 512-character limit', () => {
    const cursor = encodeCursor(newRunId());
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.equal(encodeURIComponent(cursor), cursor);
    assert.ok(ListRunsQuery.safeParse({ cursor }).success);
  });

  it('is opaque but versioned: { v: 1, after }', () => {
    const id = newRunId();
    assert.deepEqual(JSON.parse(Buffer.from(encodeCursor(id), 'base64url').toString('utf8')), {
      v: 1,
      after: id,
    });
  });

  it('accepts a hand-built cursor of the same shape (cursors are not signed)', () => {
    const id = newRunId();
    assert.equal(decodeCursor(cursorOf({ v: 1, after: id })), id);
    assert.equal(decodeCursor(cursorOf({ after: id, v: 1, extra: true })), id);
  });
});

describe('decodeCursor rejects', () => {
  const id = newRunId();
  const cases: Array<[string, string]> = [
    ['empty', ''],
    ['the literal %%%garbage', '%%%garbage'],
    [
      'percent-encoded text',
      encodeURIComponent(cursorOf({ v: 1, after: id })).replace(/[A-Za-z]/, '%41'),
    ],
    [
      'standard base64 with padding',
      `${Buffer.from(JSON.stringify({ v: 1, after: id })).toString('base64')}==`,
    ],
    ['base64 with + and /', '+/+/'],
    ['whitespace around a valid cursor', ` ${encodeCursor(id)} `],
    ['base64url of plain text', b64url('hello, world')],
    ['base64url of truncated JSON', b64url('{"v":1,"after":"run_')],
    ['JSON null', cursorOf(null)],
    ['JSON number', cursorOf(42)],
    ['JSON string (the bare id)', cursorOf(id)],
    ['JSON array', cursorOf([1, id])],
    ['an object without a version', cursorOf({ after: id })],
    ['another version', cursorOf({ v: 2, after: id })],
    ['the version as a string', cursorOf({ v: '1', after: id })],
    ['no after', cursorOf({ v: 1 })],
    ['after not a string', cursorOf({ v: 1, after: 123 })],
    ['after null', cursorOf({ v: 1, after: null })],
    ['after a tenant id', cursorOf({ v: 1, after: 'ten_0c6a3a43-6f3f-4a8e-9a53-3b1f5e8f2c11' })],
    [
      'after a UUIDv4 run id',
      cursorOf({ v: 1, after: 'run_0c6a3a43-6f3f-4a8e-9a53-3b1f5e8f2c11' }),
    ],
    ['after an id with a suffix', cursorOf({ v: 1, after: `${id}x` })],
    ['after an id with a newline', cursorOf({ v: 1, after: `${id}\n` })],
    ['after in upper case', cursorOf({ v: 1, after: id.toUpperCase() })],
    ['after an SQL fragment', cursorOf({ v: 1, after: "run_' OR 1=1 --" })],
    ['a prototype-polluting object', b64url(`{"v":1,"__proto__":{"after":"${id}"}}`)],
  ];
  for (const [name, cursor] of cases) it(name, () => assertInvalid(cursor));

  it('control: the well-formed cursor those cases are derived from is accepted', () => {
    assert.equal(decodeCursor(cursorOf({ v: 1, after: id })), id);
    assert.ok(RUN_ID_PATTERN.test(id));
  });
});

describe('decodeCursor on arbitrary input (property)', () => {
  const outcome = (cursor: string): string | 'invalid' => {
    try {
      return decodeCursor(cursor);
    } catch (error) {
      assert.ok(
        isKeelError(error) && error.code === 'invalid_cursor',
        `unexpected ${String(error)} for ${JSON.stringify(cursor)}`,
      );
      return 'invalid';
    }
  };

  it('either returns a run id or throws invalid_cursor, for any string', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.base64String(),
          fc.stringMatching(/^[A-Za-z0-9_-]{0,200}$/),
        ),
        (cursor) => {
          const result = outcome(cursor);
          if (result !== 'invalid') assert.match(result, RUN_ID_PATTERN);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('either returns a run id or throws invalid_cursor, for any JSON encoded as a cursor', () => {
    const shaped = fc.record(
      {
        v: fc.oneof(fc.constant(1), fc.jsonValue()),
        after: fc.oneof(fc.constant(newRunId()), fc.string(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), shaped), (value) => {
        const result = outcome(cursorOf(value));
        if (result !== 'invalid') {
          assert.match(result, RUN_ID_PATTERN);
          assert.equal(
            result,
            (value as { after: string }).after,
            'the id returned is the one in the cursor',
          );
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('decodeCursorOf: schedule ids and fire times', () => {
  const invalid = (run: () => unknown) =>
    assert.throws(run, (error: unknown) => isKeelError(error) && error.code === 'invalid_cursor');
  const scheduleId = 'sch_01a2326c-acfa-773d-818a-168f14c1cc33';

  it('round-trips a schedule id and a logical time', () => {
    assert.equal(decodeCursorOf(encodeCursor(scheduleId), isScheduleId), scheduleId);
    assert.equal(decodeCursorOf(encodeCursor(1_767_225_600_000), isEpochMs), 1_767_225_600_000);
    assert.equal(decodeCursorOf(encodeCursor(0), isEpochMs), 0);
    assert.equal(decodeCursorOf(encodeCursor(-86_400_000), isEpochMs), -86_400_000); // a backfill before 1970 pages too
  });

  it('refuses a position of another list or one the database could not compare', () => {
    for (const after of [newRunId(), 'sch_x', `${scheduleId} `, 5, null])
      invalid(() => decodeCursorOf(cursorOf({ v: 1, after }), isScheduleId));
    // A fractional, unsafe or huge time would be a bigint error on Postgres (a 500) rather than a
    // 400.
    for (const after of [1.5, 2 ** 53, -(2 ** 53), 1e300, '1', null])
      invalid(() => decodeCursorOf(cursorOf({ v: 1, after }), isEpochMs));
  });
});
