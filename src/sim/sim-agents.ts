// The agents, fake model and fake tools one scenario runs: each agent of the mix alternates, per
// round, fake-model calls, inline tool calls, browser steps and a wait for input nobody answers.
// Agents are ordinary Keel agents (journaled, replayable); only their dependencies are simulated.
import { isKeelError } from '../domain/keel-error.ts';
import { defineAgent, defineModel } from '../sdk/define.ts';
import type {
  AgentDefinition,
  MockModelOptions,
  ModelDefinition,
  ToolDefinition,
} from '../sdk/types.ts';
import { SIM_BROWSER_TOOL, SIM_TOOL, simTools } from './fake-tools.ts';
import type { SimAgentMix, SimScenario } from './scenario.ts';

export const SIM_MODEL = 'sim-model';
/** What a separately started Keel's agents module (agents-module.ts) reads: the scenario file and t = 0. */
export const SIM_SCENARIO_ENV = 'KEEL_SIM_SCENARIO';
export const SIM_START_AT_ENV = 'KEEL_SIM_START_AT';

export interface SimDefinitions {
  agents: AgentDefinition[];
  tools: ToolDefinition<{ step: number }, { ms: number }>[];
  models: ModelDefinition[];
}

/** The agent name Keel knows a mix entry by. */
export function simAgentName(mix: SimAgentMix): string {
  return `sim-${mix.name}`;
}

/** The fake model's mock options: latency, ramp and fault windows of the scenario. */
export function simModelOptions(scenario: SimScenario, startAtMs: number): MockModelOptions {
  const options: MockModelOptions = {
    latency: scenario.model.latency,
    seed: scenario.seed,
    startAtMs,
    faults: scenario.faults.flatMap((f): NonNullable<MockModelOptions['faults']> => {
      if (f.kind === 'model-outage')
        return [{ kind: 'outage', fromSeconds: f.fromSeconds, toSeconds: f.toSeconds }];
      if (f.kind === 'model-rate-limit')
        return [
          {
            kind: 'rate-limit',
            fromSeconds: f.fromSeconds,
            toSeconds: f.toSeconds,
            retryAfterMs: f.retryAfterMs,
            share: f.share,
          },
        ];
      return [];
    }),
  };
  const slowdown = scenario.faults.find((f) => f.kind === 'model-slowdown');
  if (slowdown !== undefined)
    options.latencyRamp = {
      fromSeconds: slowdown.fromSeconds,
      toSeconds: slowdown.toSeconds,
      toScale: slowdown.toScale,
    };
  return options;
}

/** Everything Keel must serve to run `scenario`, with fault windows counted from `startAtMs`. */
export function simDefinitions(scenario: SimScenario, startAtMs: number): SimDefinitions {
  const model = defineModel({
    name: SIM_MODEL,
    provider: 'mock',
    options: simModelOptions(scenario, startAtMs),
    maxConcurrency: scenario.model.maxConcurrency,
    maxAttempts: scenario.model.maxAttempts,
    price: scenario.model.price,
    stream: false,
  });
  const tools = simTools(scenario, startAtMs);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const agents = scenario.agents.map((mix) => simAgent(mix, byName));
  return { agents, tools, models: [model] };
}

function simAgent(
  mix: SimAgentMix,
  tools: Map<string, ToolDefinition<{ step: number }, { ms: number }>>,
): AgentDefinition {
  const tool = tools.get(SIM_TOOL)!;
  const browser = tools.get(SIM_BROWSER_TOOL);
  return defineAgent<{ seq: number }, { rounds: number }>({
    name: simAgentName(mix),
    version: '1',
    tools: browser === undefined ? [tool] : [tool, browser],
    run: async (ctx, input) => {
      for (let round = 0; round < mix.rounds; round += 1) {
        for (let call = 0; call < mix.modelCalls; call += 1)
          await ctx.model({
            model: SIM_MODEL,
            messages: [{ role: 'user', content: `run ${input.seq} round ${round} call ${call}` }],
          });
        for (let step = 0; step < mix.toolCalls; step += 1) await ctx.tool(tool, { step });
        for (let step = 0; step < mix.browserSteps; step += 1) await ctx.tool(browser!, { step });
        if (mix.inputWaitMs > 0) await waitUnanswered(ctx, `round-${round}`, mix.inputWaitMs);
      }
      return { rounds: mix.rounds };
    },
  }) as AgentDefinition;
}

/** A wait for input the simulated user never gives: the run parks until the timeout. */
async function waitUnanswered(
  ctx: Parameters<AgentDefinition['run']>[0],
  key: string,
  timeoutMs: number,
): Promise<void> {
  try {
    await ctx.waitForInput(key, { timeoutMs });
  } catch (error) {
    if (!isKeelError(error) || error.code !== 'input_timeout') throw error;
  }
}
