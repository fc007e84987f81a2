// The telemetry API on its own: what each one-line call records, the derived gauges, store-derived
// gauges from a real SQLite store, and an exposition with every Keel metric present that promtool
// accepts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KeelError } from '../domain/keel-error.ts';
import { newRunId } from '../domain/ids.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { assertPromtoolAccepts, metric, parseSamples } from '../../test/support/telemetry.ts';
import { parsePoolsConfig } from '../scheduling/pool-config.ts';
import { PoolRegistry } from '../scheduling/pool-registry.ts';
import { modelCallReporter } from './model-calls.ts';
import { Telemetry, telemetry as processTelemetry } from './telemetry.ts';

const samplesOf = async (t: Telemetry) => parseSamples((await t.render()).body);

describe('Telemetry', () => {
  it('model calls: outcomes, retries, 429s and retry amplification per provider', async () => {
    const t = new Telemetry();
    t.modelCall({ provider: 'openai', model: 'a', outcome: 'ok', attempts: 3, rateLimited: 2 });
    t.modelCall({ provider: 'openai', model: 'a', outcome: 'error', attempts: 1, rateLimited: 0 });
    t.modelCall({ provider: 'anthropic', model: 'b', outcome: 'ok', attempts: 1, rateLimited: 0 });
    const s = await samplesOf(t);
    assert.equal(metric(s, 'keel_model_calls_total', { provider: 'openai', outcome: 'ok' }), 1);
    assert.equal(metric(s, 'keel_model_calls_total', { provider: 'openai', outcome: 'error' }), 1);
    assert.equal(metric(s, 'keel_model_retries_total', { provider: 'openai' }), 2);
    assert.equal(metric(s, 'keel_model_rate_limited_total', { provider: 'openai' }), 2);
    assert.equal(
      metric(s, 'keel_model_retry_amplification', { provider: 'openai' }),
      2,
      '4 attempts for 2 calls',
    );
    assert.equal(metric(s, 'keel_model_retry_amplification', { provider: 'anthropic' }), 1);
  });

  it('the gateway reporter counts 429 attempts and reports a call once', async () => {
    const before = metric(
      parseSamples((await processTelemetry.render()).body),
      'keel_model_rate_limited_total',
      { provider: 'p429' },
    );
    const report = modelCallReporter('p429', 'm');
    report.attemptFailed(
      new KeelError('model_unavailable', 'rate limited', {
        retryable: true,
        details: { status: 429 },
      }),
    );
    report.attemptFailed(
      new KeelError('model_unavailable', 'server error', {
        retryable: true,
        details: { status: 503 },
      }),
    );
    const error = new Error('final');
    assert.equal(report.end('error', 3, error), error);
    report.end('error', 3);
    const s = parseSamples((await processTelemetry.render()).body);
    assert.equal(metric(s, 'keel_model_rate_limited_total', { provider: 'p429' }) - before, 1);
    assert.equal(metric(s, 'keel_model_calls_total', { provider: 'p429' }), 1);
  });

  it('breaker state, sandbox GiB·s and commit durability', async () => {
    const t = new Telemetry();
    t.breakerState('openai', 'a', 'open');
    t.breakerState('openai', 'b', 'half_open');
    t.breakerState('openai', 'b', 'closed');
    t.sandboxEnvironment('ten_a', 1.5);
    t.sandboxEnvironment('ten_a', 0.5);
    t.sandboxEnvironment('ten_a', Number.NaN);
    t.sandboxEnvironment('ten_a', -1);
    t.commitBatch(3, false, 3);
    t.commitBatch(2, false, 0);
    let s = await samplesOf(t);
    assert.equal(metric(s, 'keel_model_breaker_state', { model: 'a' }), 2);
    assert.equal(metric(s, 'keel_model_breaker_state', { model: 'b' }), 0);
    assert.equal(metric(s, 'keel_sandbox_environment_gib_seconds_total', { tenant: 'ten_a' }), 2);
    assert.equal(metric(s, 'keel_commits_not_durable'), 3, 'acknowledged, not flushed');
    assert.equal(t.lastCommitBatchSize, 2);
    t.commitBatch(1, true, 1);
    s = await samplesOf(t);
    assert.equal(
      metric(s, 'keel_commits_not_durable'),
      0,
      'a flushed transaction makes every earlier one durable',
    );
    assert.equal(metric(s, 'keel_commit_batch_size_count'), 3);
  });

  it('cost per successful run is all spend over successes; the deadline share is over every ended run', async () => {
    const t = new Telemetry();
    t.addRunSpend('ten', 'agent', 0.3);
    t.runEnded('ten', 'agent', 'failed', 'agent_error', false);
    let s = await samplesOf(t);
    assert.equal(
      s.some((x) => x.name === 'keel_cost_per_successful_run_usd'),
      false,
      'undefined before any success',
    );
    t.addRunSpend('ten', 'agent', 0.1);
    t.runEnded('ten', 'agent', 'succeeded', 'ok', true);
    t.addRunSpend('ten', 'agent', 0.2);
    t.runEnded('ten', 'agent', 'succeeded', 'ok', false);
    s = await samplesOf(t);
    assert.ok(
      Math.abs(metric(s, 'keel_cost_per_successful_run_usd', { agent: 'agent' }) - 0.3) < 1e-12,
    );
    assert.ok(
      Math.abs(metric(s, 'keel_runs_succeeded_within_deadline_ratio', { agent: 'agent' }) - 1 / 3) <
        1e-12,
    );
    assert.equal(metric(s, 'keel_runs_total', { status: 'succeeded', outcome: 'ok' }), 2);
  });

  it('pool probes: depth sums, the oldest wait wins, and a stopped probe no longer counts', async () => {
    const t = new Telemetry();
    const stopA = t.registerPool('tools', { depth: () => 2, oldestWaitMs: () => 1500 });
    t.registerPool('tools', { depth: () => 1, oldestWaitMs: () => null });
    let s = await samplesOf(t);
    assert.equal(metric(s, 'keel_pool_queue_depth', { pool: 'tools' }), 3);
    assert.equal(metric(s, 'keel_pool_oldest_item_age_seconds', { pool: 'tools' }), 1.5);
    stopA();
    s = await samplesOf(t);
    assert.equal(metric(s, 'keel_pool_queue_depth', { pool: 'tools' }), 1);
    assert.equal(metric(s, 'keel_pool_oldest_item_age_seconds', { pool: 'tools' }), 0);
  });

  it('effect pools: limit, holders and per-tenant queues at scrape time; waits, holds and refusals as they happen', async () => {
    const t = new Telemetry();
    const pools = new PoolRegistry({ telemetry: t });
    pools.configure(parsePoolsConfig({ pools: { browser: { limit: 1, maxQueued: 1 } } }, 'test'));
    const release = await pools.acquire('browser', { tenantId: 't1', priority: 'batch' });
    const waiting = pools.acquire('browser', { tenantId: 't2', priority: 'batch' });
    await assert.rejects(
      pools.acquire('browser', { tenantId: 't3', priority: 'batch' }),
      /queued already/,
    );
    let s = await samplesOf(t);
    assert.equal(metric(s, 'keel_pool_limit', { pool: 'browser' }), 1);
    assert.equal(metric(s, 'keel_pool_running', { pool: 'browser' }), 1);
    assert.equal(metric(s, 'keel_pool_queue_depth', { pool: 'browser' }), 1);
    assert.equal(metric(s, 'keel_pool_tenant_running', { pool: 'browser', tenant: 't1' }), 1);
    assert.equal(metric(s, 'keel_pool_tenant_queue_depth', { pool: 'browser', tenant: 't2' }), 1);
    assert.equal(
      metric(s, 'keel_pool_rejected_total', { pool: 'browser', reason: 'queue_full' }),
      1,
    );
    assert.equal(
      metric(s, 'keel_pool_tenant_rejected_total', {
        pool: 'browser',
        tenant: 't3',
        reason: 'queue_full',
      }),
      1,
    );
    assert.equal(
      s.some((x) => x.name === 'keel_pool_queue_depth' && x.labels.tenant !== undefined),
      false,
      'no tenant label on per-pool series',
    );
    release();
    (await waiting)();
    s = await samplesOf(t);
    assert.equal(metric(s, 'keel_pool_wait_seconds_count', { pool: 'browser' }), 2);
    assert.equal(metric(s, 'keel_pool_execution_seconds_count', { pool: 'browser' }), 2);
    assert.equal(
      metric(s, 'keel_pool_tenant_wait_seconds_count', { pool: 'browser', tenant: 't2' }),
      1,
    );
    assert.equal(
      metric(s, 'keel_pool_tenant_queue_depth', { pool: 'browser', tenant: 't2' }),
      0,
      'a tenant that left the queue drops out',
    );
    pools.close();
  });

  it('store-derived gauges come from the attached store, and every metric passes promtool', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-telemetry-unit-'));
    const store = new SqliteStore({ path: join(dir, 'keel.db') });
    try {
      await store.migrate();
      const tenant = await store.createTenant('acme', 'hash');
      await store.createRun({
        id: newRunId(),
        tenantId: tenant.id,
        agent: 'a',
        agentVersion: '1',
        input: null,
        priority: 'interactive',
        budget: {},
        metadata: null,
        parentRunId: null,
        idempotencyKey: null,
        requestHash: null,
      });
      const t = new Telemetry();
      const detach = t.attachStore(store);
      t.modelCall({ provider: 'p', model: 'm', outcome: 'ok', attempts: 2, rateLimited: 1 });
      t.breakerState('p', 'm', 'closed');
      t.sandboxEnvironment(tenant.id, 1);
      t.commitBatch(1, true, 1);
      t.addRunSpend(tenant.id, 'a', 0.01);
      t.runEnded(tenant.id, 'a', 'succeeded', 'ok', true);
      t.metrics.effectWait.observe({ kind: 'model' }, 0.01);
      t.metrics.effectExecution.observe({ kind: 'model' }, 0.2);
      t.metrics.tokens.inc({ tenant: tenant.id, model: 'm', type: 'input' }, 10);
      t.metrics.costUsd.inc({ tenant: tenant.id, model: 'm' }, 0.01);
      t.metrics.commitDuration.observe(0.001);
      t.metrics.commits.inc({ result: 'ok' });
      const { body, contentType } = await t.render();
      assert.match(contentType, /text\/plain/);
      assertPromtoolAccepts(body);
      const s = parseSamples(body);
      assert.equal(metric(s, 'keel_tenant_runs', { tenant: tenant.id, state: 'queued' }), 1);
      assert.equal(metric(s, 'keel_tenant_runs', { tenant: tenant.id, state: 'running' }), 0);
      assert.equal(metric(s, 'keel_pool_queue_depth', { pool: 'runs' }), 1);
      const names = new Set(s.map((x) => x.name.replace(/_(bucket|sum|count)$/, '')));
      for (const name of [
        'keel_pool_queue_depth',
        'keel_pool_oldest_item_age_seconds',
        'keel_effect_wait_seconds',
        'keel_effect_execution_seconds',
        'keel_runs_total',
        'keel_runs_succeeded_within_deadline_total',
        'keel_runs_succeeded_within_deadline_ratio',
        'keel_tenant_runs',
        'keel_model_calls_total',
        'keel_model_rate_limited_total',
        'keel_model_retries_total',
        'keel_model_retry_amplification',
        'keel_model_breaker_state',
        'keel_tokens_total',
        'keel_cost_usd_total',
        'keel_run_cost_usd_total',
        'keel_cost_per_successful_run_usd',
        'keel_unknown_executions',
        'keel_sandbox_environment_gib_seconds_total',
        'keel_commits_not_durable',
        'keel_commit_batch_size',
        'keel_commit_duration_seconds',
        'keel_commits_total',
      ])
        assert.ok(names.has(name), `${name} is exposed`);
      detach();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
