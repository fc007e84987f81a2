// The `prewarm` section: starting an environment's preparation ahead of the tool call that needs
// it. With hit rate h (the share of calls whose preparation was started in time), lead L and
// preparation time P, the expected wait is P − h·min(P, L), and a hit with L > P holds the ready
// environment's memory for L − P seconds before it is used. Pure arithmetic on the section's own
// inputs.
import assert from 'node:assert/strict';
import { brief } from './display.ts';
import { chosen, constant, figure, max, min, mul, named, sub, type Figure } from './formula.ts';
import type { PrewarmInput } from './scenario.ts';

export interface PrewarmLead {
  leadSeconds: number;
  expectedWaitSeconds: Figure;
  extraGiBSecondsPerCall: Figure;
}

export interface PrewarmResult {
  /** The wait with no prewarming: the whole preparation. */
  waitWithoutPrewarmSeconds: Figure;
  leads: PrewarmLead[];
  /** The smallest lead among those given whose expected wait is the least. */
  bestLeadSeconds: Figure;
  recommendation: string;
}

export function planPrewarm(input: PrewarmInput): PrewarmResult {
  const prep = named('prepSeconds', input.prepSeconds);
  const hit = named('hitRate', input.hitRate);
  const memory = named('memoryGiB', input.memoryGiB);
  const leads = input.leadSeconds.map((leadSeconds): PrewarmLead => {
    const lead = named('lead', leadSeconds);
    return {
      leadSeconds,
      expectedWaitSeconds: figure(sub(prep, mul(hit, min(prep, lead))), 's'),
      extraGiBSecondsPerCall: figure(mul(hit, memory, max(constant(0), sub(lead, prep))), 'GiB·s'),
    };
  });
  assert.ok(leads.length > 0, 'the schema requires at least one lead');
  const best = leads.reduce((a, b) => {
    const byWait = b.expectedWaitSeconds.value - a.expectedWaitSeconds.value;
    return byWait < 0 || (byWait === 0 && b.leadSeconds < a.leadSeconds) ? b : a;
  });
  const result = {
    waitWithoutPrewarmSeconds: figure(prep, 's'),
    leads,
    bestLeadSeconds: chosen(
      best.leadSeconds,
      's',
      'the smallest lead with the least prepSeconds − hitRate × min(prepSeconds, lead)',
    ),
  };
  const recommendation =
    best.expectedWaitSeconds.value < input.prepSeconds
      ? `Prewarm ${brief(best.leadSeconds)} s ahead: the expected wait drops from ${brief(input.prepSeconds)} s to ${brief(best.expectedWaitSeconds.value)} s for ${brief(best.extraGiBSecondsPerCall.value)} extra GiB·s per call.`
      : `Prewarming does not shorten the wait here (hit rate ${brief(input.hitRate)}, leads given); the wait stays ${brief(input.prepSeconds)} s.`;
  return { ...result, recommendation };
}
