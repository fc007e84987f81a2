// Deadline-aware admission at POST /v1/runs (issue 27): a run submitted with a deadline gets an
// estimate of when it will finish (src/domain/admission.ts, from what the store measured for its
// agent); past its deadline, the request's `whenLate` says whether it is accepted anyway, admitted
// as batch, or refused with 429 `deadline_unmeetable` before any run exists. A run without a
// deadline costs no read here.
import {
  ADMISSION_RATE_WINDOW_MS,
  admission,
  expectedFinishAt,
  type WhenLate,
} from '../domain/admission.ts';
import { KeelError } from '../domain/keel-error.ts';
import type { Priority } from '../domain/records.ts';
import type { Store } from '../store/store.ts';

/**
 * The priority to admit the run with and its expected finish, or a thrown `deadline_unmeetable`.
 * @example
 * const { priority, expectedFinishAt } = await admitByDeadline(store, 'triage', body, Date.now());
 */
export async function admitByDeadline(
  store: Pick<Store, 'admissionSample'>,
  agent: string,
  request: { priority?: Priority; budget?: { deadlineMs?: number }; whenLate?: WhenLate },
  now: number,
): Promise<{ priority: Priority; expectedFinishAt: number | null }> {
  const priority = request.priority ?? 'interactive';
  const deadlineMs = request.budget?.deadlineMs;
  if (deadlineMs === undefined) return { priority, expectedFinishAt: null };
  const deadlineAt = now + deadlineMs;
  const sample = await store.admissionSample(agent, deadlineAt, now - ADMISSION_RATE_WINDOW_MS);
  const expected = expectedFinishAt(sample, now);
  switch (admission(expected, deadlineAt, request.whenLate ?? 'accept')) {
    case 'admit':
      return { priority, expectedFinishAt: expected };
    case 'batch':
      return { priority: 'batch', expectedFinishAt: expected };
    case 'refuse':
      throw new KeelError(
        'deadline_unmeetable',
        `agent ${agent} is expected to finish this run at ${new Date(expected!).toISOString()}, after its deadline ${new Date(deadlineAt).toISOString()}`,
        {
          retryable: true,
          details: {
            expectedFinishAt: new Date(expected!).toISOString(),
            deadlineAt: new Date(deadlineAt).toISOString(),
            runsAhead: sample.ahead,
            completionsPerSec:
              Math.round((sample.completed / (ADMISSION_RATE_WINDOW_MS / 1000)) * 1000) / 1000,
          },
        },
      );
  }
}
