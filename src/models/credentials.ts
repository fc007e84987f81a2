// Preflight of model credentials: which declared models cannot authenticate as configured (a key
// variable that is unset, or a hosted provider called with no key variable at all), found at start
// instead of by every run failing with model_auth_failed. It reads variable names and whether they
// hold a value, never the keys themselves.
import type { ModelDefinition } from '../sdk/types.ts';

/** One model endpoint whose credentials will not work as configured. */
export interface CredentialProblem {
  model: string;
  /** `<model>/<replica>`, as errors and metrics name the endpoint. */
  endpoint: string;
  provider: ModelDefinition['provider'];
  /** The variable the key is read from; undefined when the model names none. */
  variable: string | undefined;
  /** One line naming the model and the variable, with the fix. */
  message: string;
}

/**
 * The endpoints of `models` whose key variable is unset (per `isSet`), or that call a provider's
 * hosted API (no `baseUrl`) with no key variable. A custom `baseUrl` without `apiKeyEnv` is taken
 * as a keyless local server (vLLM, Ollama) and passes; `mock` needs nothing.
 * @example
 * credentialProblems([gpt], (name) => process.env[name] !== undefined);
 * // [{ model: 'gpt', variable: 'OPENAI_API_KEY', message: 'model gpt needs OPENAI_API_KEY, …' }]
 */
export function credentialProblems(
  models: readonly ModelDefinition[],
  isSet: (variable: string) => boolean,
): CredentialProblem[] {
  const problems: CredentialProblem[] = [];
  for (const model of models) {
    if (model.provider === 'mock') continue;
    const replicas =
      model.replicas !== undefined && model.replicas.length > 0
        ? model.replicas
        : [{ name: 'default', baseUrl: model.baseUrl, apiKeyEnv: undefined }];
    for (const replica of replicas) {
      const variable = replica.apiKeyEnv ?? model.apiKeyEnv;
      const endpoint = `${model.name}/${replica.name}`;
      const where = replicas.length > 1 ? ` (replica ${replica.name})` : '';
      const base = { model: model.name, endpoint, provider: model.provider, variable };
      if (variable !== undefined && !isSet(variable)) {
        problems.push({
          ...base,
          message: `model ${model.name}${where} needs ${variable}, which is unset: set ${variable} to the ${model.provider} API key`,
        });
      } else if (variable === undefined && (replica.baseUrl ?? '') === '') {
        problems.push({
          ...base,
          message: `model ${model.name}${where} calls the hosted ${model.provider} API with no key: name the variable that holds it with apiKeyEnv`,
        });
      }
    }
  }
  return problems;
}
