// An OpenAI Agents SDK `Model` and `ModelProvider` whose every call is one `ctx.model` effect of a
// Keel run: the gateway calls the provider (routing, limits, retries, pricing; token deltas reach
// the run's live `model.delta` events) and the journal keeps the answer, so a replay after a crash
// returns it without calling the provider again. It never calls a provider itself.
import {
  Usage,
  type Model,
  type ModelProvider,
  type ModelRequest as AgentsModelRequest,
  type ModelResponse as AgentsModelResponse,
  type StreamEvent,
} from '@openai/agents';
import type { AgentContext, ModelRequest, ModelResponse } from '../../sdk/types.ts';
import { toChatMessages, toOutputItems, toToolSpecs, usageData } from './items.ts';

/** The response id the SDK sees: Keel keeps no server-side conversation state to refer to. */
const RESPONSE_ID = 'keel';

export class KeelAgentsModel implements Model {
  readonly #ctx: AgentContext;
  readonly #model: string;

  constructor(ctx: AgentContext, model: string) {
    this.#ctx = ctx;
    this.#model = model;
  }

  async getResponse(request: AgentsModelRequest): Promise<AgentsModelResponse> {
    const response = await this.#call(request);
    return {
      usage: new Usage(usageData(response)),
      output: toOutputItems(response),
      providerData: { model: response.model, costUsd: response.usage.costUsd },
    };
  }

  /**
   * The journaled answer as stream events. The effect completes before the first event (a journal
   * entry is the whole answer), so the text arrives as one delta; clients following the run see
   * the provider's own token deltas live as `model.delta` events.
   */
  async *getStreamedResponse(request: AgentsModelRequest): AsyncIterable<StreamEvent> {
    yield { type: 'response_started' };
    const response = await this.#call(request);
    if (response.text !== '') yield { type: 'output_text_delta', delta: response.text };
    yield {
      type: 'response_done',
      response: { id: RESPONSE_ID, usage: usageData(response), output: toOutputItems(response) },
    };
  }

  #call(request: AgentsModelRequest): Promise<ModelResponse> {
    const keelRequest: ModelRequest = { model: this.#model, messages: toChatMessages(request) };
    const tools = request.modelSettings.toolChoice === 'none' ? [] : toToolSpecs(request);
    if (tools.length > 0) keelRequest.tools = tools;
    const { maxTokens, temperature } = request.modelSettings;
    if (maxTokens !== undefined) keelRequest.maxOutputTokens = maxTokens;
    if (temperature !== undefined) keelRequest.temperature = temperature;
    return this.#ctx.model(keelRequest);
  }
}

/**
 * Resolves the SDK's model names to Keel models: an agent's `model` names a model of the gateway;
 * an agent without one gets `defaultModel`.
 */
export class KeelModelProvider implements ModelProvider {
  readonly #ctx: AgentContext;
  readonly #defaultModel: string;

  constructor(ctx: AgentContext, defaultModel: string) {
    if (typeof defaultModel !== 'string' || defaultModel.length === 0)
      throw new TypeError('keel/openai-agents: the default model must be a non-empty string');
    this.#ctx = ctx;
    this.#defaultModel = defaultModel;
  }

  getModel(modelName?: string): Model {
    return new KeelAgentsModel(
      this.#ctx,
      modelName === undefined || modelName === '' ? this.#defaultModel : modelName,
    );
  }
}
