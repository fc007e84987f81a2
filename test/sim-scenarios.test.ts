// `keel sim` end to end: each named scenario's short form runs against an embedded Keel (SQLite in a
// temp dir) through the real HTTP API, and its report is checked: every chart with a predicted and
// a measured value, the capacity figures sampled from Keel's /metrics, no run lost, failures only
// where the scenario's faults put them; the steady one also against `keel server` + `keel worker`
// processes on PostgreSQL (`--workers`); and the page opens in Chromium (its screenshot replaces docs/sim-report.png only with KEEL_UPDATE_DOCS=1: a test
// run leaves the checkout as it found it).
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { parseSimScenario } from '../src/sim/scenario.ts';
import { simulate } from '../src/sim/simulate.ts';
import type { ReportData } from '../src/sim/report-html.ts';
import { writeReport } from '../src/sim/write-report.ts';
import { CHROMIUM_ARGS } from '../src/browser/chromium.ts';
import { CHROMIUM_PATH } from './support/browser.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { chromiumMissing as chromiumMissingAt } from './support/browser-pages.ts';

const EXAMPLES = fileURLToPath(new URL('../examples/sim/', import.meta.url));
const DOCS_SCREENSHOT = fileURLToPath(new URL('../docs/sim-report.png', import.meta.url));
const CHART_IDS = [
  'throughput',
  'queue-age',
  'stages',
  'fairness',
  'retries',
  'environment',
  'cost',
  'load',
];
const SCENARIOS = ['steady', 'burst', 'dependency-down', 'tenant-flood', 'model-slowing'];
// Undefined when Chromium is there; under CI its absence fails the file instead of skipping.
const chromiumMissing = chromiumMissingAt(CHROMIUM_PATH);

const out = mkdtempSync(join(tmpdir(), 'keel-sim-test-'));
after(() => rmSync(out, { recursive: true, force: true }));

async function runShort(name: string) {
  const scenario = parseSimScenario(
    JSON.parse(readFileSync(join(EXAMPLES, `${name}.short.json`), 'utf8')),
  );
  const result = await simulate(scenario, { store: 'sqlite' });
  return { scenario, result, report: await writeShort(name, result) };
}

async function writeShort(name: string, result: Awaited<ReturnType<typeof simulate>>) {
  const report = await writeReport(result, join(out, name), {
    pngs: chromiumMissing === undefined,
  });
  return report;
}

function checkReport(data: ReportData, html: string): void {
  assert.deepEqual(
    data.charts.map((c) => c.id),
    CHART_IDS,
  );
  for (const chart of data.charts) {
    assert.ok(chart.comparisons.length > 0, `${chart.id} compares something`);
    for (const c of chart.comparisons) {
      assert.equal(typeof c.predicted, 'number', `${chart.id}: ${c.label} predicted`);
      assert.equal(typeof c.measured, 'number', `${chart.id}: ${c.label} measured`);
    }
    const section = html.slice(html.indexOf(`data-chart="${chart.id}"`));
    assert.ok(section.length > 0, `${chart.id} is in the page`);
    const own = section.slice(0, section.indexOf('</section>'));
    assert.match(own, /data-kind="predicted"/);
    assert.match(own, /data-kind="measured"/);
    assert.match(own, /<th>error<\/th>/);
  }
  // The capacity headline, from the processes' own /metrics sampled once a second.
  const c = data.capacity;
  assert.ok(c.samples > 0, 'the sampler read the Keel processes');
  assert.ok(c.peakLiveRuns > 0 && c.peakRssBytes > 0, JSON.stringify(c));
  assert.ok(Number.isFinite(c.bytesPerLiveRun), JSON.stringify(c));
  assert.ok(c.dispatchP99Seconds >= c.dispatchP50Seconds && c.dispatchP50Seconds >= 0);
  assert.ok(Number.isFinite(c.queueAgeP99Seconds) && c.queueAgeP99Pool !== '');
  assert.match(html, /<section id="capacity">/);
}

describe('keel sim short scenarios (embedded SQLite)', { concurrency: 1 }, () => {
  for (const name of SCENARIOS) {
    it(`${name}: every run ends as its faults dictate, and the report shows each chart predicted vs measured`, async () => {
      const { result, report } = await runShort(name);
      const html = readFileSync(report.html, 'utf8');
      const data = JSON.parse(readFileSync(report.json, 'utf8')) as ReportData;
      checkReport(data, html);
      const o = data.outcome;
      assert.deepEqual(result.submitErrors, []);
      assert.equal(o.submitted, o.planned, 'every planned run was submitted');
      assert.equal(o.notEnded, 0, 'no run lost: every submitted run ended');
      assert.equal(o.succeeded + o.failed + o.cancelled, o.submitted);
      assert.equal(o.cancelled, 0);
      const retries = data.charts.find((c) => c.id === 'retries')!.comparisons[0]!;
      if (name === 'dependency-down') {
        // The outage window fails model attempts: they are retried (amplification above 1), and a
        // run fails only when its model call ran out of attempts inside the window.
        assert.ok(retries.measured > 1, `model attempts per call ${retries.measured}`);
        for (const code of Object.keys(o.failuresByCode)) assert.match(code, /^model_/);
      } else {
        assert.equal(o.failed, 0, `no fault, no failure: ${JSON.stringify(o.failuresByCode)}`);
      }
      if (name === 'tenant-flood') {
        const fairness = data.charts.find((c) => c.id === 'fairness')!;
        assert.equal(fairness.table?.rows.length, 3);
      }
      if (chromiumMissing === undefined)
        assert.ok('written' in report.pngs && report.pngs.written.length === CHART_IDS.length + 1);
    });
  }

  it('steady against keel server + keel worker on PostgreSQL: no run lost, every process sampled', async () => {
    const db = await createFreshDatabase();
    try {
      const scenario = parseSimScenario(
        JSON.parse(readFileSync(join(EXAMPLES, 'steady.short.json'), 'utf8')),
      );
      const result = await simulate(scenario, {
        store: 'postgres',
        databaseUrl: db.url,
        workers: 1,
        scenarioFile: join(EXAMPLES, 'steady.short.json'),
      });
      assert.match(result.target, /keel server \+ 1 keel worker on PostgreSQL/);
      const report = await writeShort('steady-postgres', result);
      const data = JSON.parse(readFileSync(report.json, 'utf8')) as ReportData;
      checkReport(data, readFileSync(report.html, 'utf8'));
      assert.deepEqual(result.submitErrors, []);
      assert.equal(data.outcome.submitted, data.outcome.planned);
      assert.equal(data.outcome.notEnded, 0, 'no run lost');
      assert.equal(data.outcome.failed, 0, JSON.stringify(data.outcome.failuresByCode));
      const names = result.load.at(-1)!.processes.map((p) => p.name);
      assert.deepEqual(names, ['server', 'worker-1']);
    } finally {
      await db.drop();
    }
  });

  it('the report opens in Chromium (screenshot kept for the docs)', {
    skip: chromiumMissing,
  }, async () => {
    const html = join(out, 'steady', 'report.html');
    assert.ok(existsSync(html), 'the steady report was written by the first test');
    const browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_ARGS],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1240, height: 900 } });
      await page.goto(`file://${html}`);
      assert.equal(await page.locator('section.chart').count(), CHART_IDS.length);
      assert.equal((await page.locator('section.chart svg').count()) >= CHART_IDS.length, true);
      assert.equal(await page.locator('#outcome').getAttribute('data-not-ended'), '0');
      const shot = join(out, 'steady', 'page.png');
      await page.screenshot({ path: shot, fullPage: true });
      assert.ok(readFileSync(shot).length > 10_000, 'the screenshot shows the page');
      if (process.env.KEEL_UPDATE_DOCS === '1') copyFileSync(shot, DOCS_SCREENSHOT);
    } finally {
      await browser.close();
    }
  });
});
