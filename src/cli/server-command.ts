// `keel server` (API + orchestrator + pools) and `keel worker` (orchestrator + pools): stateless processes against
// one Postgres (KEEL_DATABASE_URL); run any number of each. Agents are loaded with --agents in every role, and a
// worker claims only runs of the agent versions it loaded.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { startRuntime, untilSignalled, type Role } from './runtime.ts';

export async function runServerCommand(role: Exclude<Role, 'dev'>, argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { agents: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
  });
  if (values.help === true || values.agents === undefined) {
    process.stderr.write(`usage: KEEL_DATABASE_URL=postgres://… keel ${role} --agents <file>${role === 'server' ? ' [--port 7070] [--host 127.0.0.1]' : ''}\n`);
    return values.help === true ? 0 : 2;
  }
  const { config, unknownVariables } = loadConfig(process.env, { port: values.port, host: values.host });
  const log = pino({ level: config.logLevel, base: { role } });
  if (unknownVariables.length > 0) log.warn({ unknownVariables }, 'unknown KEEL_* environment variables (typos?)');
  const runtime = await startRuntime(role, values.agents, config, log);
  process.stdout.write(`keel ${role}: ${runtime.address ?? 'no API'}  (worker ${runtime.orchestrator.owner}, durability ${runtime.store.durability})\n`);
  return untilSignalled(runtime, log);
}
