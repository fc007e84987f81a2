// Batch submit (POST /v1/runs:batch, and the embedded client's createMany): many runs checked as
// one submit checks them (run-operations.ts preparedRun) and stored in one store transaction
// (Store.createRuns), with one answer per item, in order. One bad item is that item's typed error:
// it never fails the others. Only a failure of the store itself fails the whole batch.
import { z } from 'zod';
import { ERROR_CODES } from '../domain/error-codes.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import type { NewRun, RunRecord, TenantRecord } from '../domain/records.ts';
import { countRejected, preparedRun, shownRun, type RunOperationsDeps } from './run-operations.ts';
import { CreateRunBody, ErrorBody, Run } from './schemas.ts';

export const BatchItemError = ErrorBody.shape.error;

export const BatchItemResult = z
  .object({
    index: z.number().int().describe('The item’s position in the request’s `runs`'),
    status: z
      .enum(['created', 'existing', 'error'])
      .describe(
        'created: a new run; existing: the run created earlier under the same idempotency key (a replay); error: nothing was created, see `error`',
      ),
    run: Run.optional().describe('With created and existing'),
    error: BatchItemError.optional().describe(
      'With error: the code and message POST /v1/runs would answer for this item alone',
    ),
  })
  .meta({ id: 'BatchRunResult' });

export type BatchItemResult = z.infer<typeof BatchItemResult>;

/** Each item is checked on its own (a bad item is its own error), so the body takes any items. */
export const CreateRunsBatchBody = z.strictObject({
  runs: z
    .array(z.union([CreateRunBody, z.unknown()]))
    .min(1)
    .describe(
      'The runs to submit, each the body of POST /v1/runs; at most KEEL_BATCH_RUNS_MAX (default 1,000; more, or none, is 400 batch_too_large). An item that does not match is that item’s 400 validation_failed',
    ),
});

export const CreateRunsBatchAnswer = z.object({
  results: z.array(BatchItemResult).describe('One per item, in the request’s order'),
});

function errorItem(index: number, error: KeelError): BatchItemResult {
  return { index, status: 'error', error: error.toJSON() };
}

/** The refusal of a batch as a whole: none, or more than `max`, runs. */
export function checkBatchSize(count: number, max: number): void {
  if (count < 1 || count > max)
    throw new KeelError(
      'batch_too_large',
      `a batch holds 1 to ${max} runs (KEEL_BATCH_RUNS_MAX); this one holds ${count}`,
      { details: { count, max } },
    );
}

/**
 * Submits `items` (unparsed bodies of POST /v1/runs) as top-level runs of the tenant: every item
 * checked, the valid ones stored in one transaction, one result per item in order.
 */
export async function submitRuns(
  deps: RunOperationsDeps,
  tenant: TenantRecord,
  items: readonly unknown[],
): Promise<BatchItemResult[]> {
  const results: Array<BatchItemResult | undefined> = new Array(items.length);
  const prepared: Array<{ index: number; run: NewRun }> = [];
  await Promise.all(
    items.map(async (item, index) => {
      const parsed = CreateRunBody.safeParse(item);
      if (!parsed.success) {
        results[index] = errorItem(
          index,
          new KeelError('validation_failed', `runs[${index}]: ${z.prettifyError(parsed.error)}`, {
            details: {
              issues: parsed.error.issues.map((i) => ({
                path: i.path.join('/'),
                message: i.message,
              })),
            },
          }),
        );
        return;
      }
      try {
        prepared.push({ index, run: await preparedRun(deps, tenant, parsed.data, null) });
      } catch (error) {
        if (!isKeelError(error) || ERROR_CODES[error.code].status >= 500) throw error;
        results[index] = errorItem(index, error);
      }
    }),
  );
  prepared.sort((a, b) => a.index - b.index);
  const stored =
    prepared.length === 0 ? [] : await deps.store.createRuns(prepared.map((p) => p.run));
  stored.forEach((outcome, i) => {
    const { index } = prepared[i]!;
    if (outcome instanceof KeelError) {
      countRejected(tenant, outcome);
      results[index] = errorItem(index, outcome);
      return;
    }
    results[index] = shownItem(index, outcome.run, outcome.created, tenant);
  });
  return results.map((r, index) => {
    if (r === undefined) throw new Error(`batch item ${index} has no result`);
    return r;
  });
}

function shownItem(
  index: number,
  run: RunRecord,
  created: boolean,
  tenant: TenantRecord,
): BatchItemResult {
  return {
    index,
    status: created ? 'created' : 'existing',
    run: shownRun(run, tenant) as BatchItemResult['run'],
  };
}
