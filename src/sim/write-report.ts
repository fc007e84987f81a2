// Writes a simulation's output directory: report.html (self-contained), report.json (the same
// figures as data) and the PNG charts. Owns the files, never the figures.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { capacityFigures, charts, loadChart, outcome } from './metrics.ts';
import { renderPngs, type PngOutcome } from './png.ts';
import { predict } from './predict.ts';
import { type ReportData, reportData, reportHtml } from './report-html.ts';
import type { SimulationResult } from './simulate.ts';

export interface WrittenReport {
  dir: string;
  html: string;
  json: string;
  data: ReportData;
  pngs: PngOutcome;
}

export async function writeReport(
  result: SimulationResult,
  outDir: string,
  options: { pngs?: boolean; chromiumPath?: string } = {},
): Promise<WrittenReport> {
  const dir = resolve(outDir);
  mkdirSync(dir, { recursive: true });
  const predictions = predict(result.scenario);
  const list = [
    ...charts(result, predictions),
    ...(result.load.length > 0 ? [loadChart(result, predictions)] : []),
  ];
  const data = reportData(
    result,
    outcome(result),
    list,
    predictions,
    capacityFigures(result, predictions),
  );
  const html = join(dir, 'report.html');
  const json = join(dir, 'report.json');
  writeFileSync(html, reportHtml(data));
  writeFileSync(json, `${JSON.stringify(data, null, 2)}\n`);
  const pngs =
    options.pngs === false
      ? { skipped: 'PNG charts not asked for (--no-png)' }
      : await renderPngs(list, html, dir, options.chromiumPath);
  return { dir, html, json, data, pngs };
}
