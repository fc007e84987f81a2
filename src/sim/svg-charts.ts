// Inline SVG for the report: a paired bar chart (predicted beside measured) and a line chart (a
// measured series with the prediction as a dashed line). Hand-written: Keel has no charting
// dependency, these two shapes are ~100 lines, and the report must be one self-contained file with
// no script. Every text is escaped.
import type { Comparison, Series } from './metrics.ts';

const WIDTH = 560;
const BAR_ROW = 34;
const PREDICTED = '#7a8ca5';
const MEASURED = '#d9822b';

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'n/a' : '∞';
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 0.001 || abs >= 1e6)) return value.toExponential(2);
  return abs >= 100 ? value.toFixed(0) : abs >= 10 ? value.toFixed(1) : value.toFixed(3);
}

/** Two bars per comparison (predicted, measured), on one scale per comparison row. */
export function pairedBars(comparisons: readonly Comparison[]): string {
  const height = comparisons.length * BAR_ROW * 2 + 30;
  const label = 230;
  const span = WIDTH - label - 80;
  const rows = comparisons.map((c, i) => {
    const top = 10 + i * BAR_ROW * 2;
    const max = Math.max(Math.abs(c.predicted), Math.abs(c.measured), 1e-12);
    const bar = (v: number, y: number, color: string, name: string) => {
      const w = Number.isFinite(v) ? (Math.abs(v) / max) * span : 0;
      return `<rect x="${label}" y="${y}" width="${w.toFixed(1)}" height="${BAR_ROW - 10}" fill="${color}"><title>${name}: ${escapeXml(formatNumber(v))} ${escapeXml(c.unit)}</title></rect><text x="${(label + w + 4).toFixed(1)}" y="${y + BAR_ROW - 16}" font-size="11" data-kind="${name}">${escapeXml(formatNumber(v))}</text>`;
    };
    return `<text x="0" y="${top + BAR_ROW - 8}" font-size="12">${escapeXml(c.label)}</text>${bar(c.predicted, top, PREDICTED, 'predicted')}${bar(c.measured, top + BAR_ROW, MEASURED, 'measured')}`;
  });
  const ariaLabel = `predicted and measured: ${comparisons.map((c) => c.label).join(', ')}`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(ariaLabel)}">${rows.join('')}${legend(height - 14)}</svg>`;
}

/** The measured series as a polyline over time, the prediction as a dashed horizontal line. */
export function lineChart(series: Series, predicted: number, unit: string): string {
  const height = 220;
  const left = 50;
  const bottom = height - 40;
  const xs = series.points.map(([x]) => x);
  const ys = series.points.map(([, y]) => y);
  const xMax = Math.max(...xs, 1);
  const yMax = Math.max(...ys, Number.isFinite(predicted) ? predicted : 0, 1e-9) * 1.1;
  const px = (x: number) => left + (x / xMax) * (WIDTH - left - 10);
  const py = (y: number) => bottom - (y / yMax) * (bottom - 10);
  const line = series.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
  const flat = Number.isFinite(predicted)
    ? `<line x1="${left}" x2="${WIDTH - 10}" y1="${py(predicted).toFixed(1)}" y2="${py(predicted).toFixed(1)}" stroke="${PREDICTED}" stroke-dasharray="6 4" stroke-width="2"/>`
    : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(`${series.label} over time (${unit})`)}"><line x1="${left}" x2="${left}" y1="10" y2="${bottom}" stroke="#999"/><line x1="${left}" x2="${WIDTH - 10}" y1="${bottom}" y2="${bottom}" stroke="#999"/><text x="4" y="16" font-size="11">${escapeXml(formatNumber(yMax))}</text><text x="4" y="${bottom}" font-size="11">0</text><text x="${WIDTH - 90}" y="${bottom + 16}" font-size="11">${escapeXml(formatNumber(xMax))} s</text><text x="${left}" y="${bottom + 16}" font-size="11">t = 0</text>${flat}<polyline fill="none" stroke="${MEASURED}" stroke-width="2" points="${line}"><title>${escapeXml(series.label)} (${escapeXml(unit)})</title></polyline>${legend(height - 8)}</svg>`;
}

function legend(y: number): string {
  return `<rect x="0" y="${y - 9}" width="10" height="10" fill="${PREDICTED}"/><text x="14" y="${y}" font-size="11">predicted (planner)</text><rect x="150" y="${y - 9}" width="10" height="10" fill="${MEASURED}"/><text x="164" y="${y}" font-size="11">measured (Keel)</text>`;
}
