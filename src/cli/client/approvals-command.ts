// `keel approvals …`: the tool calls waiting for a human — list them across runs (pending unless
// --status says otherwise), approve or deny one (bound to the call: the decision carries the
// argsHash the approver saw when --args-hash is given). Needs a key with the read scope to list and
// the operate scope to decide (--key, else $KEEL_API_KEY). Output conventions: the CLI kit's.
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';
import { formatTable } from './format.ts';

export const APPROVALS_USAGE = `usage: keel approvals <command> [options]

commands:
  list [--status s] [--run <id>] [--limit n] [--cursor c]
                              approval requests, newest first (default: pending ones)
  approve <run-id> <execution-id> [--note text] [--args-hash h]
                              let the call run
  deny <run-id> <execution-id> [--note text] [--args-hash h]
                              refuse the call: the agent gets tool_denied_by_approver
  help                        show this text

options:
  --status <s>        pending (default), approved, denied, expired or all
  --run <id>          only this run's requests
  --note <text>       why, kept with the decision and in the audit log
  --args-hash <h>     decide only if the call's arguments are still the ones listed (409 otherwise)

${clientFlagsUsage('KEEL_API_KEY', 'API key (read scope to list, operate to decide)')}

exit codes: 0 success, 1 request failed, 2 usage error`;

const FLAGS = {
  status: { type: 'string' },
  run: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  note: { type: 'string' },
  'args-hash': { type: 'string' },
} as const;

interface Approval {
  runId: string;
  executionId: string;
  agent: string;
  tool: string;
  args: unknown;
  argsHash: string;
  risk: string;
  reason: string;
  status: string;
  requestedAt: string;
  expiresAt: string;
  decidedBy: string | null;
  note: string | null;
}

/** A one-line preview of the call's arguments for the table. */
const preview = (args: unknown): string => {
  const text = JSON.stringify(args) ?? '';
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

function decide(decision: 'approve' | 'deny'): Subcommand {
  return async (args, io) => {
    const { values, positionals } = parse(args, FLAGS);
    if (positionals.length !== 2) throw new UsageError(`${decision} needs <run-id> <execution-id>`);
    const [runId, executionId] = positionals as [string, string];
    const client = connect(values, io.env, 'KEEL_API_KEY');
    const body = {
      decision,
      ...(values.note === undefined ? {} : { note: values.note }),
      ...(values['args-hash'] === undefined ? {} : { argsHash: values['args-hash'] }),
    };
    const decided = await client.request<Approval>(
      'POST',
      `/v1/runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(executionId)}`,
      { body },
    );
    return show(
      io,
      values.json,
      decided,
      () => `${decided.status} ${decided.tool} (${decided.executionId}) of run ${decided.runId}`,
    );
  };
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async list(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    if (positionals.length > 0)
      throw new UsageError(`list takes no positional arguments, got ${positionals.join(' ')}`);
    const query = new URLSearchParams();
    if (values.status !== undefined) query.set('status', values.status);
    if (values.run !== undefined) query.set('runId', values.run);
    if (values.limit !== undefined) query.set('limit', values.limit);
    if (values.cursor !== undefined) query.set('cursor', values.cursor);
    const client = connect(values, io.env, 'KEEL_API_KEY');
    const qs = query.size > 0 ? `?${query}` : '';
    const page = await client.request<{ approvals: Approval[]; nextCursor: string | null }>(
      'GET',
      `/v1/approvals${qs}`,
    );
    return show(io, values.json, page, () => {
      if (page.approvals.length === 0) return 'no approval requests';
      const table = formatTable(
        ['RUN', 'EXECUTION', 'AGENT', 'TOOL', 'RISK', 'STATUS', 'EXPIRES', 'ARGUMENTS'],
        page.approvals.map((a) => [
          a.runId,
          a.executionId,
          a.agent,
          a.tool,
          a.risk,
          a.status,
          a.expiresAt,
          preview(a.args),
        ]),
      );
      return page.nextCursor === null ? table : `${table}\nmore: --cursor ${page.nextCursor}`;
    });
  },
  approve: decide('approve'),
  deny: decide('deny'),
};

/**
 * Runs `keel approvals <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runApprovalsCommand(['list'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runApprovalsCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('approvals', APPROVALS_USAGE, SUBCOMMANDS, argv, io);
}
