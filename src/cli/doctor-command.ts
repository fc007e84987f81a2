// `keel doctor [--json] [--models f] [--agents f] [--call-models]`: which sandbox tiers work on this
// host, and for each one that does not, why and what to install; then every declared model's
// credentials (the check `keel dev|server|worker` make at start), and on request one cheap call per
// provider endpoint. It proves each tier by running a real command in it; it changes nothing on the
// host.
import { loadConfig } from '../config/config.ts';
import { probeTiers } from '../sandbox/tier-probe.ts';
import { callModels, checkModelCredentials, declaredModels } from './doctor-models.ts';
import { expectPositionals, HELP_FLAG, parseFlags } from './kit/args.ts';
import { EXIT_FAILURE, EXIT_OK, type CliIo } from './kit/output.ts';

export const DOCTOR_USAGE = `usage: keel doctor [--json] [--models <file>] [--agents <file>] [--call-models]

  Proves which sandbox tiers work on this host by running a real command in each; for each one that does not,
  says why and what to install. Then checks every declared model's credentials: a model whose key variable
  is unset is named with the variable (the same check keel dev, server and worker make at start). Changes
  nothing on the host.

options:
  --models <file>   the models file (default: $KEEL_MODELS_FILE)
  --agents <file>   the agents module, for the models it declares with defineModel()
  --call-models     also make one 1-token completion per provider endpoint and key, and report each outcome
  --json            machine-readable output
  --help            show this text

exit codes: 0 at least one tier works and every model check passed, 1 no tier works or a model check failed,
2 usage error`;

export async function runDoctorCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    json: { type: 'boolean', default: false },
    models: { type: 'string' },
    agents: { type: 'string' },
    'call-models': { type: 'boolean', default: false },
    ...HELP_FLAG,
  });
  if (values.help) {
    io.stdout.write(`${DOCTOR_USAGE}\n`);
    return EXIT_OK;
  }
  expectPositionals(positionals, []);
  const models = await declaredModels(
    values.models ?? loadConfig(io.env).config.modelsFile,
    values.agents,
  );
  const reports = await probeTiers();
  const credentials = checkModelCredentials(models);
  const calls = values['call-models'] ? await callModels(models) : undefined;
  if (values.json) {
    io.stdout.write(
      `${JSON.stringify({ tiers: reports, models: credentials, ...(calls === undefined ? {} : { calls }) }, null, 2)}\n`,
    );
  } else {
    io.stdout.write('sandbox tiers on this host:\n');
    for (const report of reports) {
      const mark = report.ok ? 'ok  ' : 'FAIL';
      const timing =
        report.coldStartMs === undefined ? '' : ` (sandbox start to exit ${report.coldStartMs} ms)`;
      io.stdout.write(`  ${mark} ${report.tier.padEnd(10)} ${report.detail}${timing}\n`);
      if (report.fix !== undefined) io.stdout.write(`       fix: ${report.fix}\n`);
    }
    io.stdout.write(
      models.length === 0
        ? 'model credentials: no models declared (pass --models or --agents, or set KEEL_MODELS_FILE)\n'
        : 'model credentials:\n',
    );
    for (const check of credentials)
      io.stdout.write(
        `  ${check.ok ? 'ok  ' : 'FAIL'} ${check.model.padEnd(16)} ${check.detail}\n`,
      );
    if (calls !== undefined) {
      io.stdout.write(
        calls.length === 0 ? 'model calls: no provider to call\n' : 'model calls (1 token each):\n',
      );
      for (const call of calls) {
        const also = call.covers.length > 1 ? ` (also ${call.covers.slice(1).join(', ')})` : '';
        const outcome = call.ok ? call.detail : `${call.code ?? 'error'}: ${call.detail}`;
        io.stdout.write(
          `  ${call.ok ? 'ok  ' : 'FAIL'} ${call.model.padEnd(16)} ${outcome} [${call.ms} ms]${also}\n`,
        );
      }
    }
  }
  // Useful as a deploy check: fails when no tier at all can run tools, or a model cannot
  // authenticate.
  const modelsOk = credentials.every((c) => c.ok) && (calls ?? []).every((c) => c.ok);
  return reports.some((report) => report.ok) && modelsOk ? EXIT_OK : EXIT_FAILURE;
}
