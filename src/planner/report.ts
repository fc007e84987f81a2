// The planner's two outputs: the human report (one table per section — figure, value, formula —
// with the bottleneck and each section's choice marked, and the section's one-line recommendation
// under it) and the JSON form of the same result. Formats only: computes no figure of its own.
import type { CapacityResult } from './capacity.ts';
import { cell, percent } from './display.ts';
import type { Figure, Verdict } from './formula.ts';
import { SECTION_NAMES, type PlanResult, type PlanSections, type SectionName } from './plan.ts';

/**
 * Marks a highlighted row (the bottleneck, the chosen lead, batch or replica, the binding limit).
 */
const HIGHLIGHT = '▶';
const COLUMN_GAP = '  ';

interface Row {
  group: string;
  label: string;
  value: string;
  formula: string;
  highlight?: boolean;
}

interface Table {
  title: string;
  rows: Row[];
  recommendation: string;
}

const fig = (
  group: string,
  label: string,
  f: Figure,
  highlight = false,
  value = cell(f.value, f.unit),
): Row => ({ group, label, value, formula: f.formula, highlight });
const verdict = (group: string, label: string, v: Verdict): Row => ({
  group,
  label,
  value: v.value ? 'yes' : 'no',
  formula: v.formula,
});
const orNever = (f: Figure): string =>
  f.value === Number.POSITIVE_INFINITY ? 'never' : cell(f.value, f.unit);

/**
 * The readable report: a headline (bottleneck and recommendation), then one table per section
 * present.
 * @example
 * process.stdout.write(formatReport(plan(scenario), { title: 'scenario.json' }));
 */
export function formatReport(result: PlanResult, options: { title?: string } = {}): string {
  const lines = [`Keel capacity plan${options.title === undefined ? '' : `: ${options.title}`}`];
  if (result.description !== undefined) lines.push(result.description);
  lines.push(...headline(result.sections.capacity), '');
  for (const name of SECTION_NAMES) {
    const table = tableOf(name, result.sections);
    if (table !== undefined) lines.push(...renderTable(table), '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * The result as JSON; an infinite figure (unbounded, never) is written as the string "Infinity".
 */
export function formatPlanJson(result: PlanResult): string {
  return `${JSON.stringify(result, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value), 2)}\n`;
}

function headline(c: CapacityResult): string[] {
  const recommendation = `Recommendation: ${c.recommendation}`;
  if (c.bottleneck === null || c.resources === null) return [recommendation];
  const utilization = c.resources[c.bottleneck].utilization.value;
  return [
    `Bottleneck: ${c.bottleneck} (${percent(utilization)} of capacity${utilization > 1 ? ': OVER CAPACITY' : ''})`,
    recommendation,
  ];
}

function tableOf(name: SectionName, s: PlanSections): Table | undefined {
  switch (name) {
    case 'capacity':
      return capacityTable(s.capacity);
    case 'pause': {
      const p = s.pause;
      if (p === undefined) return undefined;
      const rows = [
        fig('', 'pause + resume', p.transitionSeconds),
        fig('', 'memory freed for', p.freedSeconds),
        fig('', 'GiB·s saved', p.gibSecondsSaved),
        fig('', 'cost saved', p.savedCost),
        fig('', 'net saving', p.netSaving),
        verdict('', 'pausing pays', p.pays),
        fig('', 'delay to next tool call', p.addedDelaySeconds),
        fig(
          '',
          'pays for idle gaps over',
          p.breakEvenIdleSeconds,
          false,
          orNever(p.breakEvenIdleSeconds),
        ),
      ];
      return { title: 'Pause an idle environment', rows, recommendation: p.recommendation };
    }
    case 'prewarm': {
      const p = s.prewarm;
      if (p === undefined) return undefined;
      const rows = [fig('no prewarm', 'expected wait', p.waitWithoutPrewarmSeconds)];
      for (const lead of p.leads) {
        const best = lead.leadSeconds === p.bestLeadSeconds.value;
        const group = `lead ${cell(lead.leadSeconds, 's')}${best ? ' (best)' : ''}`;
        rows.push(
          fig(group, 'expected wait', lead.expectedWaitSeconds, best),
          fig('', 'extra GiB·s per call', lead.extraGiBSecondsPerCall, best),
        );
      }
      rows.push(fig('choice', 'best lead', p.bestLeadSeconds, true));
      return { title: 'Prewarm environments', rows, recommendation: p.recommendation };
    }
    case 'commits': {
      const c = s.commits;
      if (c === undefined) return undefined;
      const rows: Row[] = [];
      for (const b of c.batchSizes) {
        const chosen = b.batchSize === c.recommendedBatchSize.value;
        rows.push(
          fig(
            `batch ${b.batchSize}${chosen ? ' (recommended)' : ''}`,
            'commits',
            b.batches,
            chosen,
          ),
          fig('', 'commit time', b.commitMs, chosen),
          fig('', 'total time', b.totalMs, chosen),
          fig('', 'worst redone work', b.worstRedoneWorkMs, chosen),
        );
      }
      rows.push(
        fig('choice', 'fastest batch size', c.fastestBatchSize),
        fig('', 'recommended batch size', c.recommendedBatchSize, true),
      );
      return { title: 'Commit batching', rows, recommendation: c.recommendation };
    }
    case 'recoveryTree': {
      const r = s.recoveryTree;
      if (r === undefined) return undefined;
      const rows = [
        fig('totals', 'success', r.successProbability),
        fig('', 'on-time success', r.onTimeSuccessProbability),
        fig('', 'expected spend per task', r.expectedSpend),
        fig('', 'expected seconds per task', r.expectedSeconds),
        fig('', 'cost per success', r.costPerSuccess),
        fig('', 'cost per on-time success', r.costPerOnTimeSuccess),
      ];
      for (const p of r.paths) {
        const outcome =
          p.outcome === 'gave up' ? 'gave up' : p.onTime ? 'success, on time' : 'success, late';
        rows.push(
          fig(`P${p.index} ${p.attempts.join(' → ')}: ${outcome}`, 'probability', p.probability),
          fig('', 'cost', p.cost),
          fig('', 'seconds', p.seconds),
        );
      }
      return { title: 'Recovery tree', rows, recommendation: r.recommendation };
    }
    case 'restart': {
      const r = s.restart;
      if (r === undefined) return undefined;
      const rows = [
        fig('', 'backlog at ready', r.backlogAtReady),
        verdict('', 'service outpaces arrivals', r.drains),
        fig('', 'drain time', r.drainSeconds, !r.drains.value, orNever(r.drainSeconds)),
        fig('', 'restart to empty queue', r.recoverySeconds, false, orNever(r.recoverySeconds)),
      ];
      return { title: 'Restart', rows, recommendation: r.recommendation };
    }
    case 'routing': {
      const r = s.routing;
      if (r === undefined) return undefined;
      const rows: Row[] = [];
      for (const replica of r.replicas) {
        const isChoice = replica.name === r.choice;
        const flip = replica.flipQueueMs;
        rows.push(
          fig(
            `${replica.name}${isChoice ? ' (choice)' : ''}`,
            'expected prefill',
            replica.expectedPrefillMs,
            isChoice,
          ),
          fig('', 'estimated total', replica.totalMs, isChoice),
          isChoice
            ? fig('', 'loses when its queue passes', flip, true, orNever(flip))
            : fig(
                '',
                'would win below queue',
                flip,
                false,
                flip.value < 0 ? 'never' : cell(flip.value, flip.unit),
              ),
        );
      }
      return { title: 'Routing across model replicas', rows, recommendation: r.recommendation };
    }
    case 'burst': {
      const b = s.burst;
      if (b === undefined) return undefined;
      const rows = [
        fig('', 'waves', b.waves),
        fig('', 'full waves', b.fullWaves),
        fig('', 'calls in the last partial wave', b.leftOver),
        fig('', 'mean wait', b.meanWaitSeconds),
        fig('', 'longest wait', b.maxWaitSeconds),
        fig('', 'all done after', b.completionSeconds, true),
      ];
      return { title: 'Burst of simultaneous calls', rows, recommendation: b.recommendation };
    }
    case 'quota': {
      const q = s.quota;
      if (q === undefined) return undefined;
      const rows = [
        fig('load', 'request rate', q.requestsPerSec),
        fig('', 'requests per minute', q.requestsPerMin),
        fig('', 'calls in flight', q.callsInFlight),
        fig('', 'tokens per minute', q.tokensPerMin),
      ];
      for (const [name, use] of Object.entries(q.limits)) {
        const binds = name === q.binding;
        rows.push(
          fig(`${name}${binds ? ' (binds)' : ''}`, 'used', use.used, binds),
          fig('', 'limit', use.limit, binds),
          fig('', 'utilization', use.utilization, binds),
          fig('', 'admits active runs', use.maxActiveRuns, binds),
        );
      }
      return { title: 'Provider quota', rows, recommendation: q.recommendation };
    }
    default: {
      const unknown: never = name;
      throw new Error(`no table for section ${String(unknown)}`);
    }
  }
}

function capacityTable(c: CapacityResult): Table {
  const rows: Row[] = [];
  for (const r of ['cpuCores', 'modelSlots', 'memoryGiB'] as const) {
    const isBottleneck = r === c.bottleneck;
    const group = `${r}${isBottleneck ? ' (bottleneck)' : ''}`;
    const use = c.resources?.[r];
    if (use === undefined) rows.push(fig(group, 'demand', c.demand[r]));
    else
      rows.push(
        fig(group, 'demand', use.demand, isBottleneck),
        fig('', 'capacity', use.capacity, isBottleneck),
        fig('', 'utilization', use.utilization, isBottleneck),
      );
  }
  rows.push(
    fig('per task', 'task duration', c.taskSeconds),
    fig('', 'environment held', c.envHeldSecondsPerTask),
    fig('', 'environment GiB·s', c.envGiBSecondsPerTask),
  );
  if (c.pausesDuringModelWait !== null)
    rows.push(verdict('', 'pauses in each model wait', c.pausesDuringModelWait));
  rows.push(
    fig('steady state', 'environments in use', c.environmentsInUse),
    fig('', 'environments created', c.environmentsCreatedPerSec),
  );
  if (c.maxArrivalPerSec !== null) rows.push(fig('', 'max arrival rate', c.maxArrivalPerSec, true));
  for (const p of c.policies) {
    const current = p.policy === c.policy;
    rows.push(
      fig(
        `policy ${p.policy}${current ? ' (current)' : ''}`,
        'environment GiB·s',
        p.envGiBSecondsPerTask,
      ),
      fig('', 'memory demand', p.memoryGiB),
      fig('', 'CPU demand', p.cpuCores),
    );
    if (p.maxArrivalPerSec !== null)
      rows.push(
        fig(
          '',
          `max arrival rate${p.bottleneck === null ? '' : ` (${p.bottleneck})`}`,
          p.maxArrivalPerSec,
        ),
      );
  }
  return {
    title: `Workload and capacity (policy: ${c.policy})`,
    rows,
    recommendation: c.recommendation,
  };
}

/**
 * Rows under a group are indented beneath its heading line, so long group names do not widen the
 * columns.
 */
function renderTable(table: Table): string[] {
  const grouped = table.rows.some((r) => r.group !== '');
  const indent = grouped ? '    ' : '';
  const length = (text: string) => [...text].length;
  const labelWidth =
    Math.max(length('figure'), ...table.rows.map((r) => length(r.label))) + indent.length;
  const valueWidth = Math.max(length('value'), ...table.rows.map((r) => length(r.value)));
  const mark = (highlight: boolean | undefined) => (highlight === true ? HIGHLIGHT : ' ');
  const line = (m: string, label: string, value: string, formula: string) =>
    `${m} ${label}${' '.repeat(labelWidth - length(label))}${COLUMN_GAP}${' '.repeat(valueWidth - length(value))}${value}${COLUMN_GAP}${formula}`.trimEnd();
  const lines = [`== ${table.title} ==`, line(' ', 'figure', 'value', 'formula')];
  for (const r of table.rows) {
    if (r.group !== '') lines.push(`${mark(r.highlight)} ${r.group}`);
    lines.push(line(mark(r.highlight), indent + r.label, r.value, r.formula));
  }
  lines.push(`→ ${table.recommendation}`);
  return lines;
}
