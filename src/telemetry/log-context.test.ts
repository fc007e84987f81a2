import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { RunRecord } from '../domain/records.ts';
import { runScopedLog, withRunContext } from './log-context.ts';
import { forgetRun, rememberRun } from './run-labels.ts';
import { runTraceId } from './run-spans.ts';

const run = (id: string, tenantId: string) =>
  ({
    id,
    tenantId,
    agent: 'a',
    agentVersion: '1',
    createdAt: 1,
    deadlineAt: null,
    parentRunId: null,
  }) as unknown as RunRecord;

describe('run log context', () => {
  it('adds tenantId and traceId to fields that name a run, and leaves others alone', () => {
    rememberRun(run('run_1', 'ten_1'));
    assert.deepEqual(withRunContext({ runId: 'run_1', error: 'x' }), {
      runId: 'run_1',
      error: 'x',
      tenantId: 'ten_1',
      traceId: runTraceId('run_1'),
    });
    assert.deepEqual(withRunContext({ error: 'x' }), { error: 'x' });
    assert.deepEqual(withRunContext(undefined), {});
    forgetRun('run_1');
    assert.deepEqual(
      withRunContext({ runId: 'run_1' }),
      { runId: 'run_1', traceId: runTraceId('run_1') },
      'an unknown run still gets its trace id',
    );
  });

  it('every run-scoped pino line carries runId, tenantId and traceId', () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const log = runScopedLog(pino({ level: 'info' }, sink));
    rememberRun(run('run_2', 'ten_2'));
    log('warn', 'commit failed', { runId: 'run_2', error: 'db down' });
    log('info', 'claim round', {});
    assert.equal(lines.length, 2);
    assert.deepEqual(
      [lines[0]!.runId, lines[0]!.tenantId, lines[0]!.traceId, lines[0]!.msg, lines[0]!.level],
      ['run_2', 'ten_2', runTraceId('run_2'), 'commit failed', 40],
    );
    assert.equal(lines[1]!.traceId, undefined);
    forgetRun('run_2');
  });
});
