// `npm run torture -- [--trials N] [--seed S] [--store sqlite|postgres] [--concurrency C]`: the
// crash-torture test at any length. Trial i uses seed S+i; `--seed <seed of a failing trial>
// --trials 1` reproduces that trial. Postgres trials each use a fresh database on
// KEEL_TEST_DATABASE_URL's server, dropped after the trial.
import { parseArgs } from 'node:util';
import { runTrials, summarize, type TrialOptions } from './harness.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '200' },
    seed: { type: 'string', default: '1' },
    store: { type: 'string', default: 'sqlite' },
    concurrency: { type: 'string', default: '2' },
  },
});
const trials = Number(values.trials);
const firstSeed = Number(values.seed);
if (!Number.isInteger(trials) || trials < 1 || !Number.isInteger(firstSeed))
  throw new Error('--trials and --seed must be integers');
if (values.store !== 'sqlite' && values.store !== 'postgres')
  throw new Error('--store must be sqlite or postgres');

const store: TrialOptions['store'] = { kind: values.store };
const started = Date.now();
{
  const reports = await runTrials({
    store,
    firstSeed,
    trials,
    concurrency: Number(values.concurrency),
    onReport: (r) =>
      process.stdout.write(
        `seed ${r.seed} ${r.crashAt} ${r.crashed ? 'crashed' : 'no crash'}${r.violations.length > 0 ? ` VIOLATED: ${r.violations.join('; ')}` : ''}\n`,
      ),
  });
  process.stdout.write(
    `\n${summarize(reports)}\n${((Date.now() - started) / 1000).toFixed(0)} s on ${values.store}\n`,
  );
  process.exitCode = reports.some((r) => r.violations.length > 0) ? 1 : 0;
}
