// `keel doctor [--json]`: which sandbox tiers work on this host, and for each one that does not,
// why and what to install. It proves each tier by running a real command in it; it changes nothing
// on the host.
import { probeTiers } from '../sandbox/tier-probe.ts';
import { expectPositionals, HELP_FLAG, parseFlags } from './kit/args.ts';
import { EXIT_FAILURE, EXIT_OK, type CliIo } from './kit/output.ts';

export const DOCTOR_USAGE = `usage: keel doctor [--json]

  Proves which sandbox tiers work on this host by running a real command in each; for each one that does not,
  says why and what to install. Changes nothing on the host.

exit codes: 0 at least one tier works, 1 none does, 2 usage error`;

export async function runDoctorCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    json: { type: 'boolean', default: false },
    ...HELP_FLAG,
  });
  if (values.help) {
    io.stdout.write(`${DOCTOR_USAGE}\n`);
    return EXIT_OK;
  }
  expectPositionals(positionals, []);
  const reports = await probeTiers();
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ tiers: reports }, null, 2)}\n`);
  } else {
    io.stdout.write('sandbox tiers on this host:\n');
    for (const report of reports) {
      const mark = report.ok ? 'ok  ' : 'FAIL';
      const timing =
        report.coldStartMs === undefined ? '' : ` (sandbox start to exit ${report.coldStartMs} ms)`;
      io.stdout.write(`  ${mark} ${report.tier.padEnd(10)} ${report.detail}${timing}\n`);
      if (report.fix !== undefined) io.stdout.write(`       fix: ${report.fix}\n`);
    }
  }
  // Useful as a deploy check: fails only when no tier at all can run tools.
  return reports.some((report) => report.ok) ? EXIT_OK : EXIT_FAILURE;
}
