// `keel doctor [--json]`: which sandbox tiers work on this host, and for each one that does not, why and what to
// install. It proves each tier by running a real command in it; it changes nothing on the host.
import { probeTiers } from '../sandbox/tier-probe.ts';

export async function runDoctorCommand(args: string[], io: { stdout: NodeJS.WritableStream }): Promise<number> {
  const reports = await probeTiers();
  if (args.includes('--json')) {
    io.stdout.write(`${JSON.stringify({ tiers: reports }, null, 2)}\n`);
  } else {
    io.stdout.write('sandbox tiers on this host:\n');
    for (const report of reports) {
      const mark = report.ok ? 'ok  ' : 'FAIL';
      const timing = report.coldStartMs === undefined ? '' : ` (sandbox start to exit ${report.coldStartMs} ms)`;
      io.stdout.write(`  ${mark} ${report.tier.padEnd(10)} ${report.detail}${timing}\n`);
      if (report.fix !== undefined) io.stdout.write(`       fix: ${report.fix}\n`);
    }
  }
  // Useful as a deploy check: fails only when no tier at all can run tools.
  return reports.some((report) => report.ok) ? 0 : 1;
}
