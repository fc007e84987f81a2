import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isKeelError } from '../domain/keel-error.ts';
import { ModelGateway } from './gateway.ts';
import { loadModelsFile, parseModelsFile } from './model-config.ts';

const example = {
  models: [
    {
      name: 'gpt',
      provider: 'openai',
      providerModel: 'gpt-4o-mini',
      version: '2024-07-18',
      apiKeyEnv: 'OPENAI_API_KEY',
      price: { inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: 0.075 },
      limits: { rpm: 500, tpm: 200_000, maxConcurrency: 32 },
      fallbacks: ['claude'],
      timeouts: { attemptMs: 30_000, callMs: 120_000 },
      replicas: [
        { name: 'east', baseUrl: 'https://east.example.com/v1' },
        { name: 'west', baseUrl: 'https://west.example.com/v1', apiKeyEnv: 'WEST_KEY' },
      ],
    },
    {
      name: 'claude',
      provider: 'anthropic',
      providerModel: 'claude-sonnet-4-5',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
    },
  ],
  retryBudget: { ratio: 0.2, perRun: 10 },
  breaker: { consecutiveFailures: 5, openMs: 10_000 },
  tenantLimits: { default: { rpm: 60 }, tenants: { acme: { tpm: 100_000 } } },
};

function configInvalid(pattern: RegExp) {
  return (error: unknown) =>
    isKeelError(error) && error.code === 'config_invalid' && pattern.test(error.message);
}

describe('models file', () => {
  it('parses a full example into definitions and gateway options a gateway accepts', () => {
    const loaded = parseModelsFile(example);
    assert.deepEqual(
      loaded.models.map((m) => m.name),
      ['gpt', 'claude'],
    );
    assert.equal(loaded.models[0]!.kind, 'keel.model');
    assert.deepEqual(loaded.options.tenantLimits, example.tenantLimits);
    const seen: string[] = [];
    const gateway = new ModelGateway(loaded.models, {
      ...loaded.options,
      secret: (name) => {
        seen.push(name);
        return `key-of-${name}`;
      },
    });
    assert.equal(gateway.resolve('gpt').version, '2024-07-18');
    assert.deepEqual(seen.sort(), ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'WEST_KEY']);
    assert.deepEqual(Object.keys(gateway.stats().breakers).sort(), [
      'claude/default',
      'gpt/east',
      'gpt/west',
      'mock/default',
    ]);
  });

  it('names each bad field by its path, including misspelt ones and keys written in place of variable names', () => {
    assert.throws(
      () => parseModelsFile({ models: [{ name: 'x', provider: 'openai', maxConcurency: 3 }] }),
      configInvalid(/models\.0.*maxConcurency/),
    );
    assert.throws(
      () =>
        parseModelsFile({
          models: [{ name: 'x', provider: 'openai', apiKeyEnv: 'sk-live-abc123' }],
        }),
      configInvalid(/models\.0\.apiKeyEnv: must be the NAME/),
    );
    assert.throws(
      () => parseModelsFile({ models: [{ name: 'x', provider: 'cohere' }] }),
      configInvalid(/models\.0\.provider/),
    );
    assert.throws(
      () => parseModelsFile({ models: [], breaker: { failureRatio: 2 } }),
      configInvalid(/breaker\.failureRatio/),
    );
  });

  it('an account a model names must be configured', () => {
    const { models } = parseModelsFile({
      models: [{ name: 'a', provider: 'mock', account: 'org' }],
    });
    assert.throws(() => new ModelGateway(models), configInvalid(/account org has no entry/));
    const ok = parseModelsFile({
      models: [{ name: 'a', provider: 'mock', account: 'org' }],
      accounts: { org: { tpm: 1_000 } },
    });
    assert.doesNotThrow(() => new ModelGateway(ok.models, ok.options));
  });

  it('a fallback must be another configured model', () => {
    const { models } = parseModelsFile({
      models: [{ name: 'a', provider: 'mock', fallbacks: ['nope'] }],
    });
    assert.throws(() => new ModelGateway(models), configInvalid(/fallback nope/));
  });

  it('reads a file, and says clearly when it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-models-'));
    try {
      const path = join(dir, 'keel.models.json');
      writeFileSync(path, JSON.stringify(example));
      assert.equal(loadModelsFile(path).models.length, 2);
      writeFileSync(path, '{ not json');
      assert.throws(() => loadModelsFile(path), configInvalid(/is not JSON/));
      assert.throws(() => loadModelsFile(join(dir, 'missing.json')), configInvalid(/cannot read/));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
