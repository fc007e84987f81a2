// `keel doctor`'s model section: every declared model's credentials (the preflight `keel dev`,
// `server` and `worker` make at start), and with --call-models one cheap call (a 1-token completion)
// per distinct provider endpoint and key, to prove the key and the URL work. It prints variable
// names, never keys.
import { resolve } from 'node:path';
import { readSecretEnv } from '../config/config.ts';
import { isKeelError } from '../domain/keel-error.ts';
import { credentialProblems } from '../models/credentials.ts';
import { ModelGateway } from '../models/gateway.ts';
import { loadModelsFile } from '../models/model-config.ts';
import type { ModelDefinition } from '../sdk/types.ts';
import { loadAgentsForStart, secretIsSet } from './startup-checks.ts';

/** How long one doctor call may take before it is reported failed. */
const DOCTOR_CALL_TIMEOUT_MS = 20_000;

export interface ModelCheck {
  model: string;
  provider: ModelDefinition['provider'];
  /** The key variables the model's endpoints read (none for mock or keyless servers). */
  variables: string[];
  ok: boolean;
  detail: string;
}

export interface ModelCall {
  /** The model called for this provider endpoint and key (the first one declared with them). */
  model: string;
  /** Models sharing that endpoint and key, the called one included. */
  covers: string[];
  ok: boolean;
  /** Error code when the call failed. */
  code?: string;
  detail: string;
  ms: number;
}

/** The models declared in the models file and the agents module (either may be absent). */
export async function declaredModels(
  modelsFile: string | undefined,
  agentsFile: string | undefined,
): Promise<ModelDefinition[]> {
  const fromAgents = agentsFile === undefined ? [] : (await loadAgentsForStart(agentsFile)).models;
  const fromFile = modelsFile === undefined ? [] : loadModelsFile(resolve(modelsFile)).models;
  return [...fromAgents, ...fromFile];
}

export function checkModelCredentials(models: readonly ModelDefinition[]): ModelCheck[] {
  const problems = credentialProblems(models, secretIsSet);
  return models.map((model) => {
    const mine = problems.filter((p) => p.model === model.name);
    const variables = [
      ...new Set(
        [model.apiKeyEnv, ...(model.replicas ?? []).map((r) => r.apiKeyEnv)].filter(
          (v): v is string => v !== undefined,
        ),
      ),
    ];
    const detail =
      mine.length > 0
        ? mine.map((p) => p.message).join('; ')
        : model.provider === 'mock'
          ? 'mock provider: needs no key'
          : variables.length === 0
            ? 'keyless endpoint (no apiKeyEnv)'
            : `${variables.join(', ')} set`;
    return {
      model: model.name,
      provider: model.provider,
      variables,
      ok: mine.length === 0,
      detail,
    };
  });
}

/** One 1-token completion per distinct (provider, URL, key variable) among non-mock models. */
export async function callModels(models: readonly ModelDefinition[]): Promise<ModelCall[]> {
  const groups = new Map<string, string[]>();
  for (const model of models) {
    if (model.provider === 'mock') continue;
    const first = model.replicas?.[0];
    const key = [
      model.provider,
      first?.baseUrl ?? model.baseUrl ?? '',
      first?.apiKeyEnv ?? model.apiKeyEnv ?? '',
    ].join(' ');
    groups.set(key, [...(groups.get(key) ?? []), model.name]);
  }
  if (groups.size === 0) return [];
  // One attempt each, no fallbacks: the doctor reports what this endpoint answers, not a recovery.
  const gateway = new ModelGateway(
    models.map((m) => {
      const { fallbacks: _fallbacks, account: _account, ...rest } = m;
      return { ...rest, maxAttempts: 1 };
    }),
    { secret: (name) => readSecretEnv(name) },
  );
  const calls: ModelCall[] = [];
  for (const covers of groups.values()) {
    const model = covers[0]!;
    const startedAt = performance.now();
    try {
      const { response } = await gateway.call(
        { model, messages: [{ role: 'user', content: 'ping' }], maxOutputTokens: 1 },
        { signal: AbortSignal.timeout(DOCTOR_CALL_TIMEOUT_MS) },
      );
      calls.push({
        model,
        covers,
        ok: true,
        detail: `answered as ${response.model}`,
        ms: Math.round(performance.now() - startedAt),
      });
    } catch (error) {
      calls.push({
        model,
        covers,
        ok: false,
        ...(isKeelError(error) ? { code: error.code } : {}),
        detail: error instanceof Error ? error.message : String(error),
        ms: Math.round(performance.now() - startedAt),
      });
    }
  }
  return calls;
}
