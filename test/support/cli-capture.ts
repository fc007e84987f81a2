// Runs a `keel …` subcommand in-process with captured stdout/stderr, for CLI tests: its exit code
// and what it printed.
import { PassThrough } from 'node:stream';

type Command = (
  argv: string[],
  io: {
    stdout: NodeJS.WritableStream;
    stderr: NodeJS.WritableStream;
    env: Record<string, string | undefined>;
  },
) => Promise<number>;

export async function captureCli(
  command: Command,
  env: Record<string, string | undefined>,
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await command(argv, { stdout, stderr, env });
  return { code, out, err };
}
