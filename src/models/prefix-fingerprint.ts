// Prefix fingerprints of a model request: one hash per message boundary, each covering the tools,
// the system prompt and every message up to that point, with the estimated tokens it spans. Two
// requests sharing a prefix share its hashes, which is what a provider's prompt cache keys on. It
// never keeps prompt text; only hashes leave here.
import { createHash } from 'node:crypto';
import type { ChatMessage, ModelToolSpec } from '../sdk/types.ts';

/** Rough size of a token in characters (for estimates only; providers report real counts). */
export const CHARS_PER_TOKEN = 4;

export interface PrefixPoint {
  hash: string;
  /** Estimated tokens from the start of the request to the end of this prefix. */
  tokens: number;
}

/**
 * The prefix points of a request, shortest first; the last one covers the whole request.
 * @example
 * const points = prefixFingerprint(messages, tools);
 * points.at(-1)!.tokens; // the request's estimated input tokens
 */
export function prefixFingerprint(
  messages: readonly ChatMessage[],
  tools: readonly ModelToolSpec[],
): PrefixPoint[] {
  const points: PrefixPoint[] = [];
  let chars = 0;
  let previous = '';
  if (tools.length > 0) {
    const text = JSON.stringify(tools);
    chars += text.length;
    previous = digest(previous, 'tools', text);
    points.push({ hash: previous, tokens: estimateTokens(chars) });
  }
  for (const message of messages) {
    const text =
      message.toolCalls === undefined
        ? message.content
        : message.content + JSON.stringify(message.toolCalls);
    chars += text.length;
    previous = digest(previous, message.role, text);
    points.push({ hash: previous, tokens: estimateTokens(chars) });
  }
  return points;
}

export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}

function digest(previous: string, role: string, text: string): string {
  return createHash('sha256')
    .update(previous)
    .update('\u0000')
    .update(role)
    .update('\u0000')
    .update(text)
    .digest('base64url')
    .slice(0, 22);
}
