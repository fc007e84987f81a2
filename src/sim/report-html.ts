// The report page: one self-contained HTML file (inline CSS and SVG, no script, no external
// resource) with the outcome, each chart's predicted and measured values and the error between
// them, and the planner's inputs. Also the report's JSON twin, for tests and tooling.
import type { CapacityFigures, Chart, Outcome } from './metrics.ts';
import type { Predictions } from './predict.ts';
import type { SimulationResult } from './simulate.ts';
import { escapeXml, formatNumber, lineChart, pairedBars } from './svg-charts.ts';

export interface ReportData {
  scenario: string;
  description: string | undefined;
  target: string;
  startedAt: string;
  wallSeconds: number;
  outcome: Outcome;
  capacity: CapacityFigures;
  charts: Chart[];
  plannerScenario: Predictions['plannerScenario'];
  plannerRecommendation: string;
}

export function reportData(
  result: SimulationResult,
  outcome: Outcome,
  charts: Chart[],
  p: Predictions,
  capacity: CapacityFigures,
): ReportData {
  return {
    scenario: result.scenario.name,
    description: result.scenario.description,
    target: result.target,
    startedAt: result.startedAt,
    wallSeconds: result.wallSeconds,
    outcome,
    capacity,
    charts,
    plannerScenario: p.plannerScenario,
    plannerRecommendation: p.planned.recommendation,
  };
}

const percentError = (e: number) =>
  Number.isNaN(e) ? 'n/a' : `${e >= 0 ? '+' : ''}${(e * 100).toFixed(1)}%`;

/** The SVG of one chart (bars, then the series if any): the HTML and the PNGs show the same. */
export function chartSvg(chart: Chart): string {
  const series =
    chart.series === undefined
      ? ''
      : lineChart(chart.series.measured, chart.series.predicted, chart.unit);
  return pairedBars(chart.comparisons) + series;
}

function chartSection(chart: Chart): string {
  const rows = chart.comparisons
    .map(
      (c) =>
        `<tr><td>${escapeXml(c.label)}</td><td class="p">${formatNumber(c.predicted)}</td><td class="m">${formatNumber(c.measured)}</td><td>${escapeXml(c.unit)}</td><td class="e">${percentError(c.error)}</td><td class="src">${escapeXml(c.source)}</td></tr>`,
    )
    .join('');
  const extra =
    chart.table === undefined
      ? ''
      : `<table class="t"><tr><th></th>${chart.table.columns.map((c) => `<th>${escapeXml(c)}</th>`).join('')}</tr>${chart.table.rows
          .map(
            ([name, ...v]) =>
              `<tr><td>${escapeXml(name)}</td>${v.map((x) => `<td>${formatNumber(x)}</td>`).join('')}</tr>`,
          )
          .join('')}</table>`;
  return `<section class="chart" id="chart-${chart.id}" data-chart="${chart.id}"><h2>${escapeXml(chart.title)}</h2><div class="svg">${chartSvg(chart)}</div><table class="cmp"><tr><th>figure</th><th>predicted</th><th>measured</th><th>unit</th><th>error</th><th>prediction from</th></tr>${rows}</table>${extra}<p class="note">${escapeXml(chart.note)}</p></section>`;
}

const MIB = 2 ** 20;

function capacitySection(c: CapacityFigures): string {
  const saturated =
    c.saturated.length === 0
      ? '<li>nothing: no pool queued, no process or the machine passed 90% CPU</li>'
      : c.saturated
          .map(
            (s) =>
              `<li>${escapeXml(s.resource)} at t = ${formatNumber(s.firstAt)} s (${escapeXml(s.how)})</li>`,
          )
          .join('');
  const row = (name: string, value: string) =>
    `<tr><td>${escapeXml(name)}</td><td class="m">${escapeXml(value)}</td></tr>`;
  return `<section id="capacity"><h2>Capacity</h2><table class="cap">${[
    row('most live runs at once', formatNumber(c.peakLiveRuns)),
    row(
      'resident memory: start → peak (all Keel processes)',
      `${formatNumber(c.baselineRssBytes / MIB)} → ${formatNumber(c.peakRssBytes / MIB)} MiB`,
    ),
    row(
      'memory per live run (above the start, at the most live runs)',
      `${formatNumber(c.bytesPerLiveRun / 1024)} KiB`,
    ),
    row(
      "dispatch p50 / p99 (Keel's time between a run's steps)",
      `${formatNumber(c.dispatchP50Seconds)} / ${formatNumber(c.dispatchP99Seconds)} s`,
    ),
    row(
      'submission to the first step p50 / p99 (the run queue)',
      `${formatNumber(c.firstStepP50Seconds)} / ${formatNumber(c.firstStepP99Seconds)} s`,
    ),
    row(`queue age p99 (largest: ${c.queueAgeP99Pool})`, `${formatNumber(c.queueAgeP99Seconds)} s`),
    row("the planner's bottleneck for the same inputs", c.plannerBottleneck ?? 'none'),
  ].join(
    '',
  )}</table><p>Saturated, earliest first (${c.samples} samples, one a second):</p><ol id="saturated">${saturated}</ol></section>`;
}

export function reportHtml(data: ReportData): string {
  const o = data.outcome;
  const failures =
    Object.entries(o.failuresByCode)
      .map(([code, n]) => `${escapeXml(code)}: ${n}`)
      .join(', ') || 'none';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>keel sim — ${escapeXml(data.scenario)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232b;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin:0 0 8px}
.chart{border:1px solid #dde3ea;border-radius:6px;padding:14px;margin:14px 0;display:inline-block;vertical-align:top;width:560px;margin-right:14px}
table{border-collapse:collapse;margin:8px 0;font-size:12px}td,th{border-bottom:1px solid #eef1f4;padding:3px 6px;text-align:left}
.e{font-weight:600}.note,.src{color:#5b6776;font-size:12px}.ok{color:#1a7f37}.bad{color:#b42318}
</style></head><body>
<h1>keel sim — ${escapeXml(data.scenario)}</h1>
<p>${escapeXml(data.description ?? '')}</p>
<p>Target: ${escapeXml(data.target)} · t = 0 at ${escapeXml(data.startedAt)} · ${formatNumber(data.wallSeconds)} s of wall time.</p>
<p id="outcome" data-not-ended="${o.notEnded}">Runs: ${o.planned} planned, ${o.submitted} submitted, <b>${o.succeeded} succeeded</b>, ${o.failed} failed (${failures}), ${o.cancelled} cancelled, <span class="${o.notEnded === 0 ? 'ok' : 'bad'}">${o.notEnded} not ended</span>.</p>
${capacitySection(data.capacity)}
<p>Planner's headline for the same inputs: ${escapeXml(data.plannerRecommendation)}</p>
${data.charts.map(chartSection).join('\n')}
<h2>The planner's inputs</h2><pre>${escapeXml(JSON.stringify(data.plannerScenario, null, 2))}</pre>
</body></html>
`;
}
