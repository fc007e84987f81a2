// The `commits` section: how batching commits trades total time against work lost in a crash. Work
// runs one request after another; each batch of b records is committed at a fixed cost plus a cost
// per record; a crash just before a commit becomes durable loses the work of the whole uncommitted
// batch. Pure arithmetic.
import assert from 'node:assert/strict';
import { brief } from './display.ts';
import { add, ceil, chosen, div, figure, min, mul, named, type Figure } from './formula.ts';
import type { CommitsInput } from './scenario.ts';

/**
 * The recommended batch size is the smallest whose total time is within this fraction of the
 * fastest.
 */
export const COMMITS_NEAR_FASTEST_FRACTION = 0.05;

export interface CommitBatch {
  batchSize: number;
  batches: Figure;
  commitMs: Figure;
  /** Work plus commits with no crash. */
  totalMs: Figure;
  /** Work redone after a crash at the worst moment: one whole uncommitted batch. */
  worstRedoneWorkMs: Figure;
}

export interface CommitsResult {
  batchSizes: CommitBatch[];
  fastestBatchSize: Figure;
  recommendedBatchSize: Figure;
  recommendation: string;
}

export function planCommits(input: CommitsInput): CommitsResult {
  const requests = named('requests', input.requests);
  const work = named('workMs', input.workMs);
  const batchSizes = input.batchSizes.map((size): CommitBatch => {
    const batchSize = named('batchSize', size);
    const batches = figure(ceil(div(requests, batchSize)), 'batches');
    const commitMs = figure(
      add(
        mul(named('batches', batches), named('commitFixedMs', input.commitFixedMs)),
        mul(requests, named('perRecordMs', input.perRecordMs)),
      ),
      'ms',
    );
    return {
      batchSize: size,
      batches,
      commitMs,
      totalMs: figure(add(mul(requests, work), named('commitMs', commitMs)), 'ms'),
      worstRedoneWorkMs: figure(mul(min(batchSize, requests), work), 'ms'),
    };
  });
  assert.ok(batchSizes.length > 0, 'the schema requires at least one batch size');
  const fastest = batchSizes.reduce((a, b) =>
    b.totalMs.value < a.totalMs.value ||
    (b.totalMs.value === a.totalMs.value && b.batchSize < a.batchSize)
      ? b
      : a,
  );
  const nearFastest = fastest.totalMs.value * (1 + COMMITS_NEAR_FASTEST_FRACTION);
  const recommended = batchSizes
    .filter((b) => b.totalMs.value <= nearFastest)
    .reduce((a, b) => (b.batchSize < a.batchSize ? b : a));
  const recommendation =
    `Commit in batches of ${recommended.batchSize}: ${brief(recommended.totalMs.value)} ms in all` +
    (recommended === fastest
      ? ''
      : ` (the fastest, ${fastest.batchSize}, takes ${brief(fastest.totalMs.value)} ms)`) +
    `, and a crash redoes at most ${brief(recommended.worstRedoneWorkMs.value)} ms of work.`;
  return {
    batchSizes,
    fastestBatchSize: chosen(
      fastest.batchSize,
      'requests',
      'the batch size with the least totalMs (the smaller on a tie)',
    ),
    recommendedBatchSize: chosen(
      recommended.batchSize,
      'requests',
      `the smallest batch size with totalMs ≤ fastest × ${1 + COMMITS_NEAR_FASTEST_FRACTION}`,
    ),
    recommendation,
  };
}
