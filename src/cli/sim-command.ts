// `keel sim <scenario.json>`: runs a simulation scenario (fake model and fake browser, synthetic
// tenants and agents) against an embedded Keel (SQLite in a temp dir, or Postgres) or a running
// one, shows live progress, and writes the report directory. Parses flags and prints; the work is
// src/sim's.
import { readFileSync } from 'node:fs';
import { parseFlags, HELP_FLAG, onePositional } from './kit/args.ts';
import { EXIT_FAILURE, EXIT_OK, isTty, UsageError, type CliIo } from './kit/output.ts';
import type { Progress } from '../sim/driver.ts';
import { parseSimScenario } from '../sim/scenario.ts';
import { simulate } from '../sim/simulate.ts';
import { writeReport } from '../sim/write-report.ts';

const SIM_USAGE = `usage: keel sim <scenario.json> [--out dir] [--store sqlite|postgres] [--database-url url]
                [--workers n] [--url http://keel --admin-key k | --api-key k] [--no-png]

  Runs the scenario against an embedded Keel (SQLite in a temporary directory by default; --store
  postgres --database-url for PostgreSQL; with --workers n, a keel server and n keel worker
  processes on it instead) or a running Keel (--url; it must serve the simulator's agents, see
  docs/guides/simulation.md), then writes report.html, report.json and PNG charts to
  --out (default ./sim-report/<scenario name>). Exit 1 when a run did not end.`;

const SIM_FLAGS = {
  out: { type: 'string' },
  store: { type: 'string' },
  'database-url': { type: 'string' },
  workers: { type: 'string' },
  url: { type: 'string' },
  'admin-key': { type: 'string' },
  'api-key': { type: 'string' },
  png: { type: 'boolean', default: true },
  ...HELP_FLAG,
} as const;

export async function runSimCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(argv, SIM_FLAGS);
  if (values.help) {
    io.stdout.write(`${SIM_USAGE}\n`);
    return EXIT_OK;
  }
  const file = onePositional(positionals, 'scenario.json');
  const store = values.store ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'postgres')
    throw new UsageError(`--store must be sqlite or postgres, got ${JSON.stringify(store)}`);
  if (store === 'postgres' && values['database-url'] === undefined)
    throw new UsageError('--store postgres needs --database-url');
  const workers = values.workers === undefined ? 0 : Number(values.workers);
  if (!Number.isInteger(workers) || workers < 0 || workers > 16)
    throw new UsageError(`--workers must be a whole number from 0 to 16, got ${values.workers}`);
  if (workers > 0 && (store !== 'postgres' || values.url !== undefined))
    throw new UsageError('--workers needs --store postgres (and no --url)');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read the scenario ${file}: ${(error as Error).message}`);
  }
  const scenario = parseSimScenario(raw, `the scenario ${file}`);
  const tty = isTty(io.stderr);
  const show = (p: Progress) => {
    const line = `t=${(p.elapsedMs / 1_000).toFixed(1)}s submitted ${p.submitted}/${p.planned} ended ${p.ended} (succeeded ${p.succeeded}, failed ${p.failed})${p.submitErrors > 0 ? ` submit errors ${p.submitErrors}` : ''}`;
    io.stderr.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
  };
  // Ctrl-C or a TERM ends the process through exit, so the processes a simulation started go with it.
  const interrupted = () => process.exit(130);
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const result = await simulate(
    scenario,
    {
      store,
      databaseUrl: values['database-url'],
      url: values.url,
      adminKey: values['admin-key'],
      apiKey: values['api-key'],
      workers,
      scenarioFile: file,
    },
    show,
  );
  if (tty) io.stderr.write('\n');
  const report = await writeReport(result, values.out ?? `sim-report/${scenario.name}`, {
    pngs: values.png,
  });
  const o = report.data.outcome;
  io.stdout.write(
    `${scenario.name}: ${o.submitted}/${o.planned} runs submitted, ${o.succeeded} succeeded, ${o.failed} failed, ${o.notEnded} not ended\n`,
  );
  for (const chart of report.data.charts)
    for (const c of chart.comparisons)
      io.stdout.write(
        `  ${chart.title} · ${c.label}: predicted ${c.predicted.toPrecision(3)} measured ${c.measured.toPrecision(3)} ${c.unit}\n`,
      );
  io.stdout.write(`report: ${report.html}\n`);
  if ('skipped' in report.pngs) io.stderr.write(`keel sim: ${report.pngs.skipped}\n`);
  for (const error of result.submitErrors.slice(0, 5)) io.stderr.write(`submit error: ${error}\n`);
  return o.notEnded === 0 && result.submitErrors.length === 0 ? EXIT_OK : EXIT_FAILURE;
}
