// Holds a model call's prompt between its dispatch and its commit, so its span can show it — only
// when tracing is on and KEEL_TELEMETRY_INCLUDE_CONTENT=true; otherwise it stores nothing. The
// commit holds the answer, not the prompt, hence this hand-off. Bounded: past PROMPTS_HELD_MAX the
// oldest prompts are dropped (their spans show none).
import { contentIncluded, tracingEnabled } from './tracing.ts';

export const PROMPTS_HELD_MAX = 10_000;
const prompts = new Map<string, unknown>();

/**
 * Called when a model effect is dispatched; free (returns at once) unless content goes into traces.
 */
export function rememberPrompt(runId: string, seq: number, messages: unknown): void {
  if (!tracingEnabled() || !contentIncluded()) return;
  prompts.set(`${runId}:${seq}`, messages);
  if (prompts.size > PROMPTS_HELD_MAX) prompts.delete(prompts.keys().next().value!);
}

/** The prompt remembered for this model effect (once), if any. */
export function takePrompt(runId: string, seq: number): unknown {
  const key = `${runId}:${seq}`;
  const prompt = prompts.get(key);
  prompts.delete(key);
  return prompt;
}
