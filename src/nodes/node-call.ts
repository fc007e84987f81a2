// The wire between a placer and a sandbox node: what one sandboxed call carries (the run, the
// execution, the profile, argv/stdin/env) and what comes back (the program's result, the workspace
// manifest committed with it), validated with zod on the node; and how a placer proves a call comes
// from the cluster: an HMAC-SHA256 over the time and the body, keyed by the node token's SHA-256
// (which the store holds and the node derives from its token), so no second secret is needed.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ExecResult } from '../sandbox/launch.ts';

/** Where a node takes calls, under its announced url. */
export const NODE_CALL_PATH = '/v1/calls';
export const NODE_TIME_HEADER = 'x-keel-node-time';
export const NODE_SIGNATURE_HEADER = 'x-keel-node-signature';
/** A signed call older or newer than this (clock skew included) is refused, in ms. */
export const NODE_SIGNATURE_WINDOW_MS = 60_000;

export const NodeCallSchema = z.strictObject({
  tenantId: z.string().min(1).max(200),
  runId: z.string().min(1).max(200),
  executionId: z.string().min(1).max(300),
  /** The sandbox profile as the tool holds it (re-validated by defineSandboxProfile on the node). */
  profile: z.record(z.string(), z.unknown()),
  argv: z.array(z.string()).min(1).max(1024),
  stdin: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  deadlineMs: z.number().int().min(1).optional(),
  /** False for the tools that only read the workspace: no snapshot committed. */
  snapshot: z.boolean(),
  /** Set the profile's secret variables and files (revealed on the node). */
  secrets: z.boolean(),
});
export type NodeCall = z.infer<typeof NodeCallSchema>;

export interface NodeCallResult {
  result: ExecResult;
  manifestSha256: string | undefined;
  cold: boolean;
}

/** Hex HMAC of `<time>.<sha256(body)>` under the node token's hash. */
export function signNodeCall(tokenHash: string, timeMs: number, body: string): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return createHmac('sha256', tokenHash).update(`${timeMs}.${digest}`).digest('hex');
}

/** Whether a call's signature is the placer's, made within the window around `nowMs`. */
export function verifyNodeCall(
  tokenHash: string,
  headers: { time: string | undefined; signature: string | undefined },
  body: string,
  nowMs: number,
): boolean {
  const time = Number(headers.time);
  if (!Number.isSafeInteger(time) || Math.abs(nowMs - time) > NODE_SIGNATURE_WINDOW_MS)
    return false;
  if (headers.signature === undefined || !/^[0-9a-f]{64}$/.test(headers.signature)) return false;
  const expected = signNodeCall(tokenHash, time, body);
  return timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(headers.signature, 'hex'));
}
