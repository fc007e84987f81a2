// What a model effect journals about its request, so an operator can see what the model was asked
// (`GET /v1/runs/:id/steps`): the messages, the names of the tools offered and the sampling options.
// Replay never reads it back (replay matches kind and name only), so it cannot change a run's path;
// tool schemas stay out (they are the agent's code, the same on every call, and the bulk of a request).
import type { Json } from '../domain/json.ts';
import type { ModelRequest } from '../sdk/types.ts';
import { toJson } from './journal-cursor.ts';

/** The request as the journal keeps it in the model entry's `args.request`. */
export function journaledRequest(request: ModelRequest): Json {
  return {
    messages: toJson(request.messages),
    ...(request.tools === undefined || request.tools.length === 0
      ? {}
      : { tools: request.tools.map((tool) => tool.name) }),
    ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.hint === undefined ? {} : { hint: request.hint }),
  };
}
