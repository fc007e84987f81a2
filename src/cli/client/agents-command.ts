// `keel agents list`: the agents a running Keel knows (GET /v1/agents), one line per version with
// whether it declares input and output schemas and which processes serve it; --json prints the
// answer with the schemas in full. Exit codes and output conventions are the CLI kit's.
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';
import { formatTable } from './format.ts';

export const AGENTS_USAGE = `usage: keel agents <command> [options]

commands:
  list      every agent version: latest or not, input/output schemas declared, the processes serving it
            (worker id and host); --json includes the schemas as JSON Schema
  help      show this text

${clientFlagsUsage()}

exit codes: 0 success, 1 request failed, 2 usage error`;

interface AgentVersion {
  version: string;
  latest: boolean;
  loadedHere: boolean;
  input: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  servedBy: Array<{ workerId: string; role: string; host: string; lastSeenAt: string }>;
}

/** `worker-029ee5bd` of `worker-029ee5bd-6987-…`: enough to tell processes apart in a table. */
const shortId = (workerId: string): string => workerId.replace(/^(\w+-[0-9a-f]{8})-.*$/, '$1');

const SUBCOMMANDS: Record<string, Subcommand> = {
  async list(args, io) {
    const { values, positionals } = parse(args, {});
    if (positionals.length > 0)
      throw new UsageError(`list takes no positional arguments, got ${positionals.join(' ')}`);
    const page = await connect(values, io.env).request<{
      agents: Array<{ name: string; versions: AgentVersion[] }>;
    }>('GET', '/v1/agents');
    const rows = page.agents.flatMap((agent) =>
      agent.versions.map((v) => [
        agent.name,
        v.version + (v.latest ? ' (latest)' : ''),
        v.loadedHere ? (v.input === null ? 'any' : 'schema') : '?',
        v.loadedHere ? (v.output === null ? 'any' : 'schema') : '?',
        v.servedBy.length === 0
          ? 'none'
          : v.servedBy.map((p) => `${p.role} ${shortId(p.workerId)} on ${p.host}`).join(', '),
      ]),
    );
    return show(io, values.json, page, () =>
      rows.length === 0
        ? 'no agents'
        : formatTable(['AGENT', 'VERSION', 'INPUT', 'OUTPUT', 'SERVED BY'], rows),
    );
  },
};

/**
 * Runs `keel agents <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runAgentsCommand(['list'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runAgentsCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('agents', AGENTS_USAGE, SUBCOMMANDS, argv, io);
}
