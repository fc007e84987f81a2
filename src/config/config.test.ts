// Configuration: one typed defaults object, environment variables parsed and validated in one
// place, a bad value fails naming the variable, and an unknown KEEL_* variable (probably a typo) is
// reported.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isKeelError } from '../domain/keel-error.ts';
import { ENV_VARS, loadConfig } from './config.ts';

/**
 * Asserts loadConfig refuses `env` with config_invalid and a message naming every variable in
 * `names`.
 */
function assertRejected(env: Record<string, string>, names: string[]): string {
  let message = '';
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(isKeelError(error), `expected a KeelError, got ${String(error)}`);
      assert.equal(error.code, 'config_invalid');
      message = error.message;
      for (const name of names)
        assert.ok(error.message.includes(name), `message does not name ${name}: ${error.message}`);
      return true;
    },
  );
  return message;
}

describe('loadConfig defaults', () => {
  it('an empty environment gives the documented defaults', () => {
    const { config, unknownVariables } = loadConfig({});
    assert.deepEqual(config, {
      dataDir: '.keel',
      host: '127.0.0.1',
      port: 7070,
      durability: 'fsync',
      groupCommitMaxBatch: 1024,
      groupCommitMaxWaitMs: 0,
      leaseTtlMs: 15_000,
      poolLeaseMs: 10_000,
      poolGrantRetryMs: 50,
      maxActiveRuns: 2_000,
      fairnessPolicy: 'weighted',
      mcpAllowedOrigins: [],
      poisonLeaseLosses: 3,
      preemptAfterMs: 2_000,
      retentionDays: 0,
      retentionRuns: 0,
      agentIsolation: 'isolate',
      agentBlockedMs: 2_000,
      toolTimeoutMs: 600_000,
      cancelGraceMs: 5_000,
      agentMemoryMb: 512,
      payloadMaxBytes: 1024 * 1024,
      payloadInlineMaxBytes: 64 * 1024,
      payloadStoredMaxBytes: 128 * 1024 * 1024,
      runPayloadMaxBytes: 1024 * 1024 * 1024,
      stepPreviewMaxBytes: 8 * 1024,
      archiveChunkPositions: 256,
      archiveIntervalMs: 60000,

      batchRunsMax: 1_000,
      auditRetentionDays: 365,
      delegationTtlMs: 15 * 60 * 1000,
      delegationAudience: 'keel-api',
      logLevel: 'info',
      url: 'http://127.0.0.1:7070',
      schedulerTickMs: 1_000,
      schedulerLeaseMs: 30_000,
      imageBuildWaitMs: 600_000,
      browserPath: '/usr/bin/chromium',
      browserMaxSessions: 8,
      browserIdleMs: 60_000,
      sandboxPlacement: 'local',
      placementK: 2,
      placementRefreshMs: 1_000,
      placementDeadlineMs: 30_000,
      nodeStaleMs: 10_000,
      // telemetry: content redacted, tracing off, no separate metrics listener
      telemetryIncludeContent: false,
      metricsHost: '127.0.0.1',
      adminHost: '127.0.0.1',
      corsOrigins: [],
      otelSdkDisabled: false,
      otelServiceName: 'keel',
    });
    assert.deepEqual(unknownVariables, []);
    for (const optional of ['apiKey', 'adminKey', 'databaseUrl'] as const)
      assert.equal(config[optional], undefined);
  });

  it('the default payload limit matches the API’s own default', async () => {
    const { PAYLOAD_MAX_BYTES_DEFAULT } = await import('./defaults.ts');
    assert.equal(loadConfig({}).config.payloadMaxBytes, PAYLOAD_MAX_BYTES_DEFAULT);
  });

  it('an empty variable counts as unset', () => {
    assert.deepEqual(
      loadConfig({ KEEL_PORT: '', KEEL_DURABILITY: '', KEEL_ADMIN_KEY: '' }).config,
      loadConfig({}).config,
    );
  });

  it('does not read process.env when given an environment', () => {
    const before = process.env.KEEL_PORT;
    process.env.KEEL_PORT = 'not-a-port';
    try {
      assert.equal(loadConfig({}).config.port, 7070);
    } finally {
      if (before === undefined) delete process.env.KEEL_PORT;
      else process.env.KEEL_PORT = before;
    }
  });
});

describe('loadConfig parsing', () => {
  it('reads every documented variable into its typed key', () => {
    const env = {
      KEEL_API_KEY: 'tenant-key-123',
      KEEL_ADMIN_KEY: 'admin-key-0123456789abcdef',
      KEEL_SECRETS_KEY: 'c2VjcmV0cy1rZXktZm9yLWNvbmZpZy10ZXN0LTAwMDA=',
      KEEL_DATA_DIR: '/var/lib/keel',
      KEEL_HOST: '0.0.0.0',
      KEEL_PORT: '8080',
      KEEL_DURABILITY: 'os',
      KEEL_LEASE_TTL_MS: '30000',
      KEEL_MAX_ACTIVE_RUNS: '500',
      KEEL_POISON_LEASE_LOSSES: '5',
      KEEL_PREEMPT_AFTER_MS: 'off',
      KEEL_AGENT_ISOLATION: 'thread',
      KEEL_AGENT_ISOLATES: '3',
      KEEL_AGENT_BLOCKED_MS: '500',
      KEEL_TOOL_TIMEOUT_MS: '90000',
      KEEL_CANCEL_GRACE_MS: '2500',
      KEEL_AGENT_MEMORY_MB: '128',
      KEEL_PAYLOAD_MAX_BYTES: '2097152',
      KEEL_PAYLOAD_INLINE_MAX_BYTES: '32768',
      KEEL_PAYLOAD_STORED_MAX_BYTES: '67108864',
      KEEL_RUN_PAYLOAD_MAX_BYTES: '268435456',
      KEEL_STEP_PREVIEW_MAX_BYTES: '1024',
      KEEL_BATCH_RUNS_MAX: '250',
      KEEL_PLATFORM_TOKEN_CAP_PER_DAY: '50000000',
      KEEL_PLATFORM_COST_CAP_PER_DAY: '1250.5',
      KEEL_AUDIT_RETENTION_DAYS: '30',
      KEEL_RETENTION_DAYS: '90',
      KEEL_RETENTION_RUNS: '1000',
      KEEL_ARCHIVE_INTERVAL_MS: '5000',
      KEEL_ARCHIVE_CHUNK_POSITIONS: '64',
      KEEL_LOG_LEVEL: 'debug',
      KEEL_DATABASE_URL: 'postgres://keel@localhost/keel',
      KEEL_URL: 'https://keel.example.com',
      KEEL_GROUP_COMMIT_MAX_BATCH: '256',
      KEEL_GROUP_COMMIT_MAX_WAIT_MS: '2',
      KEEL_TEST_CRASH_AT: 'commit.before-notify:3',
      KEEL_SCHEDULER_TICK_MS: '250',
      KEEL_SCHEDULER_LEASE_MS: '60000',
      KEEL_MODELS_FILE: './keel.models.json',
      KEEL_POOLS_FILE: './keel.pools.json',
      KEEL_POOL_LEASE_MS: '4000',
      KEEL_POOL_GRANT_RETRY_MS: '20',
      KEEL_FAIRNESS_POLICY: 'drf',
      KEEL_MCP_SERVERS_FILE: './keel.mcp.json',
      KEEL_MCP_ALLOWED_ORIGINS: 'https://mcp.example.com/, http://127.0.0.1:8931',
      KEEL_IMAGES_DIR: '/var/lib/keel-images',
      KEEL_IMAGE_MIRROR: 'http://mirror.example/debian',
      KEEL_IMAGE_BUILD_WAIT_MS: '0',
      KEEL_BROWSER_PATH: '/opt/chromium/chrome',
      KEEL_BROWSER_MAX_SESSIONS: '3',
      KEEL_BROWSER_IDLE_MS: '5000',
      KEEL_SANDBOX_PLACEMENT: 'nodes',
      KEEL_PLACEMENT_K: '3',
      KEEL_PLACEMENT_REFRESH_MS: '500',
      KEEL_PLACEMENT_DEADLINE_MS: '5000',
      KEEL_NODE_STALE_MS: '6000',
      KEEL_NODE_SLOTS: '12',
      KEEL_NODE_TOKEN: 'keel_node_abc',
      KEEL_TELEMETRY_INCLUDE_CONTENT: 'true',
      KEEL_METRICS_PORT: '9464',
      KEEL_METRICS_HOST: '0.0.0.0',
      KEEL_ADMIN_PORT: '7071',
      KEEL_ADMIN_HOST: '10.0.0.5',
      KEEL_KEY_REQUESTS_PER_MINUTE: '600',
      KEEL_DELEGATION_KEY: 'ZGVsZWdhdGlvbi1rZXktZm9yLWNvbmZpZy10ZXN0LTAwMDA=',
      KEEL_DELEGATION_TTL_MS: '60000',
      KEEL_DELEGATION_AUDIENCE: 'keel-prod',
      KEEL_DELEGATION_API_URL: 'https://keel.internal:7070',
      KEEL_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_SDK_DISABLED: 'false',
      OTEL_SERVICE_NAME: 'keel-prod',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
    };
    assert.deepEqual(
      Object.keys(env).sort(),
      Object.keys(ENV_VARS).sort(),
      'this test covers every variable',
    );
    const { config, unknownVariables } = loadConfig(env);
    assert.deepEqual(config, {
      apiKey: 'tenant-key-123',
      adminKey: 'admin-key-0123456789abcdef',
      secretsKey: 'c2VjcmV0cy1rZXktZm9yLWNvbmZpZy10ZXN0LTAwMDA=',
      dataDir: '/var/lib/keel',
      host: '0.0.0.0',
      port: 8080,
      durability: 'os',
      leaseTtlMs: 30_000,
      poolLeaseMs: 4_000,
      poolGrantRetryMs: 20,
      maxActiveRuns: 500,
      poisonLeaseLosses: 5,
      preemptAfterMs: 0,
      agentIsolation: 'thread',
      agentIsolates: 3,
      agentBlockedMs: 500,
      toolTimeoutMs: 90_000,
      cancelGraceMs: 2_500,
      agentMemoryMb: 128,
      payloadMaxBytes: 2 * 1024 * 1024,
      payloadInlineMaxBytes: 32 * 1024,
      payloadStoredMaxBytes: 64 * 1024 * 1024,
      runPayloadMaxBytes: 256 * 1024 * 1024,
      stepPreviewMaxBytes: 1024,
      batchRunsMax: 250,
      platformTokenCapPerDay: 50_000_000,
      platformCostCapPerDay: 1250.5,
      auditRetentionDays: 30,
      retentionDays: 90,
      retentionRuns: 1000,
      archiveIntervalMs: 5000,
      archiveChunkPositions: 64,
      logLevel: 'debug',
      databaseUrl: 'postgres://keel@localhost/keel',
      url: 'https://keel.example.com',
      groupCommitMaxBatch: 256,
      groupCommitMaxWaitMs: 2,
      testCrashAt: 'commit.before-notify:3',
      schedulerTickMs: 250,
      schedulerLeaseMs: 60_000,
      poolsFile: './keel.pools.json',
      fairnessPolicy: 'drf',
      mcpServersFile: './keel.mcp.json',
      mcpAllowedOrigins: ['https://mcp.example.com', 'http://127.0.0.1:8931'],
      imagesDir: '/var/lib/keel-images',
      imageMirror: 'http://mirror.example/debian',
      imageBuildWaitMs: 0,
      browserPath: '/opt/chromium/chrome',
      browserMaxSessions: 3,
      browserIdleMs: 5_000,
      sandboxPlacement: 'nodes',
      placementK: 3,
      placementRefreshMs: 500,
      placementDeadlineMs: 5_000,
      nodeStaleMs: 6_000,
      nodeSlots: 12,
      nodeToken: 'keel_node_abc',
      modelsFile: './keel.models.json',
      telemetryIncludeContent: true,
      metricsPort: 9464,
      metricsHost: '0.0.0.0',
      adminPort: 7071,
      adminHost: '10.0.0.5',
      keyRequestsPerMinute: 600,
      delegationKey: 'ZGVsZWdhdGlvbi1rZXktZm9yLWNvbmZpZy10ZXN0LTAwMDA=',
      delegationTtlMs: 60_000,
      delegationAudience: 'keel-prod',
      delegationApiUrl: 'https://keel.internal:7070',
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      otelTracesExporter: 'otlp',
      otelSdkDisabled: false,
      otelServiceName: 'keel-prod',
      otelExporterOtlpEndpoint: 'http://collector:4318',
      otelExporterOtlpTracesEndpoint: 'http://collector:4318/v1/traces',
    });
    assert.deepEqual(unknownVariables, []);
  });

  it('numbers arrive as numbers, at their bounds too', () => {
    assert.equal(loadConfig({ KEEL_PORT: '0' }).config.port, 0);
    assert.equal(loadConfig({ KEEL_PORT: '65535' }).config.port, 65535);
    assert.equal(loadConfig({ KEEL_LEASE_TTL_MS: '500' }).config.leaseTtlMs, 500);
    assert.equal(loadConfig({ KEEL_PAYLOAD_MAX_BYTES: '1024' }).config.payloadMaxBytes, 1024);
  });

  it('every durability and log level is accepted', () => {
    for (const durability of ['memory', 'os', 'fsync', 'replicated'])
      assert.equal(loadConfig({ KEEL_DURABILITY: durability }).config.durability, durability);
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      assert.equal(loadConfig({ KEEL_LOG_LEVEL: level }).config.logLevel, level);
  });

  it('overrides win over the environment; an undefined override leaves it alone', () => {
    const env = { KEEL_PORT: '8080', KEEL_HOST: '0.0.0.0' };
    const { config } = loadConfig(env, { port: 9090, host: undefined });
    assert.equal(config.port, 9090);
    assert.equal(config.host, '0.0.0.0');
  });

  it('overrides are validated like the environment', () => {
    assert.throws(
      () => loadConfig({}, { port: 70_000 }),
      (e: unknown) =>
        isKeelError(e) && e.code === 'config_invalid' && e.message.includes('KEEL_PORT'),
    );
  });
});

describe('loadConfig rejects invalid values, naming the variable', () => {
  const cases: Array<[string, string]> = [
    ['KEEL_PORT', 'eighty'],
    ['KEEL_PORT', '-1'],
    ['KEEL_PORT', '65536'],
    ['KEEL_PORT', '80.5'],
    ['KEEL_DURABILITY', 'sometimes'],
    ['KEEL_DURABILITY', 'FSYNC'],
    ['KEEL_LEASE_TTL_MS', '100'],
    ['KEEL_LEASE_TTL_MS', '3600001'],
    ['KEEL_LEASE_TTL_MS', 'soon'],
    ['KEEL_MAX_ACTIVE_RUNS', '0'],
    ['KEEL_MAX_ACTIVE_RUNS', 'many'],
    ['KEEL_PAYLOAD_MAX_BYTES', '1023'],
    ['KEEL_PAYLOAD_MAX_BYTES', String(64 * 1024 * 1024 + 1)],
    ['KEEL_PAYLOAD_MAX_BYTES', '1MB'],
    ['KEEL_STEP_PREVIEW_MAX_BYTES', '255'],
    ['KEEL_STEP_PREVIEW_MAX_BYTES', '8KiB'],
    ['KEEL_BATCH_RUNS_MAX', '0'],
    ['KEEL_BATCH_RUNS_MAX', '10001'],
    ['KEEL_PLATFORM_TOKEN_CAP_PER_DAY', '0'],
    ['KEEL_PLATFORM_COST_CAP_PER_DAY', '$100'],
    ['KEEL_AUDIT_RETENTION_DAYS', '0'],
    ['KEEL_ARCHIVE_CHUNK_POSITIONS', '0'],
    ['KEEL_LOG_LEVEL', 'verbose'],
    ['KEEL_API_KEY', 'short'],
    ['KEEL_ADMIN_KEY', 'too-short-admin'],
    ['KEEL_URL', 'not a url'],
  ];
  for (const [name, value] of cases) {
    it(`${name}=${value}`, () => {
      const message = assertRejected({ [name]: value }, [name]);
      // The message names the variable, not the internal key, so the fix is obvious.
      const key = ENV_VARS[name as keyof typeof ENV_VARS];
      assert.ok(
        !new RegExp(`^\\s*${key}:`, 'm').test(message),
        `names the internal key ${key}: ${message}`,
      );
    });
  }

  it('reports every invalid variable at once', () => {
    assertRejected({ KEEL_PORT: 'x', KEEL_DURABILITY: 'y', KEEL_LOG_LEVEL: 'z' }, [
      'KEEL_PORT',
      'KEEL_DURABILITY',
      'KEEL_LOG_LEVEL',
    ]);
  });

  it('a secret that is too short is named but its value is not echoed', () => {
    const message = assertRejected({ KEEL_ADMIN_KEY: 'sekrit-value' }, ['KEEL_ADMIN_KEY']);
    assert.ok(!message.includes('sekrit-value'), message);
  });
});

describe('loadConfig: numbers written loosely', () => {
  it('a blank (whitespace-only) KEEL_PORT is refused, not read as port 0', () => {
    assertRejected({ KEEL_PORT: ' ' }, ['KEEL_PORT']);
  });
});

describe('loadConfig: unknown KEEL_* variables', () => {
  it('are reported (likely typos), not fatal', () => {
    const { config, unknownVariables } = loadConfig({
      KEEL_PROT: '8080',
      KEEL_ADMINKEY: 'x',
      KEEL_DATA_DIR: '/tmp/k',
    });
    assert.deepEqual(unknownVariables.sort(), ['KEEL_ADMINKEY', 'KEEL_PROT']);
    assert.equal(config.port, 7070, 'the typo did not set the port');
    assert.equal(config.dataDir, '/tmp/k');
  });

  it('other variables, and names that merely contain KEEL, are not reported', () => {
    const { unknownVariables } = loadConfig({
      PATH: '/usr/bin',
      HOME: '/root',
      MY_KEEL_THING: '1',
      keel_port: '1',
      KEEL: '1',
    });
    assert.deepEqual(unknownVariables, []);
  });

  it('an unknown variable is reported even when empty', () => {
    assert.deepEqual(loadConfig({ KEEL_TYPO: '' }).unknownVariables, ['KEEL_TYPO']);
  });
});

describe('loadConfig: KEEL_PREEMPT_AFTER_MS', () => {
  it('takes milliseconds, and `off` or 0 turns preemption off', () => {
    assert.equal(loadConfig({ KEEL_PREEMPT_AFTER_MS: '500' }).config.preemptAfterMs, 500);
    assert.equal(loadConfig({ KEEL_PREEMPT_AFTER_MS: 'off' }).config.preemptAfterMs, 0);
    assert.equal(loadConfig({ KEEL_PREEMPT_AFTER_MS: '0' }).config.preemptAfterMs, 0);
    assertRejected({ KEEL_PREEMPT_AFTER_MS: 'soon' }, ['KEEL_PREEMPT_AFTER_MS']);
  });
});
