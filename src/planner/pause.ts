// The `pause` section: whether pausing an idle environment pays. Pausing and resuming take time per
// GiB, during which the memory is still held; only the rest of the idle gap is freed, and a gap
// shorter than both transitions delays the next tool call instead. Pure arithmetic on the section's
// own inputs.
import { brief } from './display.ts';
import {
  add,
  chosen,
  constant,
  div,
  figure,
  greaterThan,
  max,
  mul,
  named,
  sub,
  type Figure,
  type Verdict,
} from './formula.ts';
import type { PauseInput } from './scenario.ts';

export interface PauseResult {
  /**
   * Seconds spent pausing plus resuming: memoryGiB × (pauseSecondsPerGiB + resumeSecondsPerGiB).
   */
  transitionSeconds: Figure;
  freedSeconds: Figure;
  gibSecondsSaved: Figure;
  savedCost: Figure;
  /** Saved cost minus the transition cost; negative when pausing loses money. */
  netSaving: Figure;
  /** pricePerGiBSecond × memoryGiB × freedSeconds > transitionCost. */
  pays: Verdict;
  /**
   * How much later the next tool call can start, when the idle gap is shorter than pause + resume.
   */
  addedDelaySeconds: Figure;
  /** The idle gap above which pausing starts to pay (Infinity when memory costs nothing). */
  breakEvenIdleSeconds: Figure;
  recommendation: string;
}

export function planPause(input: PauseInput): PauseResult {
  const memory = named('memoryGiB', input.memoryGiB);
  const idle = named('idleSeconds', input.idleSeconds);
  const price = named('pricePerGiBSecond', input.pricePerGiBSecond);
  const transitionCost = named('transitionCost', input.transitionCost);
  const transitionSeconds = figure(
    mul(
      memory,
      add(
        named('pauseSecondsPerGiB', input.pauseSecondsPerGiB),
        named('resumeSecondsPerGiB', input.resumeSecondsPerGiB),
      ),
    ),
    's',
  );
  const transition = named('transitionSeconds', transitionSeconds);
  const freedSeconds = figure(max(constant(0), sub(idle, transition)), 's');
  const freed = named('freedSeconds', freedSeconds);
  const gibSecondsSaved = figure(mul(memory, freed), 'GiB·s');
  const savedCost = figure(mul(price, named('gibSecondsSaved', gibSecondsSaved)), 'cost');
  const costPerIdleSecond = mul(price, memory);
  const breakEvenIdleSeconds =
    costPerIdleSecond.value === 0
      ? chosen(
          Number.POSITIVE_INFINITY,
          's',
          `never: ${costPerIdleSecond.symbols} = ${costPerIdleSecond.numbers} = 0`,
        )
      : figure(add(transition, div(transitionCost, costPerIdleSecond)), 's');
  const pays = greaterThan(mul(price, memory, freed), transitionCost);
  const result = {
    transitionSeconds,
    freedSeconds,
    gibSecondsSaved,
    savedCost,
    netSaving: figure(sub(named('savedCost', savedCost), transitionCost), 'cost'),
    pays,
    addedDelaySeconds: figure(max(constant(0), sub(transition, idle)), 's'),
    breakEvenIdleSeconds,
  };
  return { ...result, recommendation: recommend(input, result) };
}

function recommend(input: PauseInput, r: Omit<PauseResult, 'recommendation'>): string {
  const delay =
    r.addedDelaySeconds.value > 0
      ? ` It would delay the next tool call by ${brief(r.addedDelaySeconds.value)} s.`
      : '';
  if (r.pays.value)
    return `Pause: it saves ${brief(r.netSaving.value)} net per idle gap of ${brief(input.idleSeconds)} s.${delay}`;
  const threshold = Number.isFinite(r.breakEvenIdleSeconds.value)
    ? ` it pays only for idle gaps longer than ${brief(r.breakEvenIdleSeconds.value)} s`
    : ' idle memory costs nothing here';
  return `Keep it resident:${threshold}.${delay}`;
}
