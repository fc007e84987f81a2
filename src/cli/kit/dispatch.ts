// `keel <noun> <verb> …` (runs, schedules, tenants): picks the verb, answers `help`, and turns
// whatever the verb throws into the kit's output and exit code. The verbs write only through `io`;
// nothing here exits the process.
import { EXIT_OK, EXIT_USAGE, reportError, type CliIo } from './output.ts';

export type Subcommand = (args: string[], io: CliIo) => Promise<number>;

const HELP_WORDS = new Set(['help', '--help', '-h']);

/**
 * Runs `keel <command> <argv…>` against its verbs: the usage text (exit 0) for help, the usage text
 * on stderr (exit 2) for a missing or unknown verb, else the verb.
 *
 * @example
 * return dispatch('schedules', SCHEDULES_USAGE, { list, get }, argv, io);
 */
export async function dispatch(
  command: string,
  usage: string,
  subcommands: Record<string, Subcommand>,
  argv: string[],
  io: CliIo,
): Promise<number> {
  const [name, ...args] = argv;
  if (name !== undefined && HELP_WORDS.has(name)) {
    io.stdout.write(`${usage}\n`);
    return EXIT_OK;
  }
  const subcommand =
    name !== undefined && Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
  if (subcommand === undefined) {
    if (name !== undefined) io.stderr.write(`keel ${command}: unknown command '${name}'\n`);
    io.stderr.write(`${usage}\n`);
    return EXIT_USAGE;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${usage}\n`);
    return EXIT_OK;
  }
  try {
    return await subcommand(args, io);
  } catch (error) {
    return reportError(command, error, io);
  }
}
