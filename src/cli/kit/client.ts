// How the commands that talk to a running Keel (runs, schedules, tenants, plan --live) reach it:
// the --url and --key flags every such command takes, their fallbacks in the environment, and the
// HTTP client built from them. A missing key or a URL that is not http(s) is a UsageError, raised
// before any request is sent.
import type { ParseArgsOptionsConfig } from 'node:util';
import { URL_DEFAULT } from '../../config/defaults.ts';
import { KeelHttpClient } from '../client/http-client.ts';
import { parseFlags } from './args.ts';
import { UsageError } from './output.ts';

/**
 * Where a client command looks for Keel without --url or KEEL_URL: where `keel dev` listens by
 * default.
 */
export const DEFAULT_KEEL_URL = URL_DEFAULT;

/** The flags of every client command: where Keel is, the key, and raw JSON output. */
export const CLIENT_FLAGS = {
  url: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const satisfies ParseArgsOptionsConfig;

/** parseFlags for a client command: its own flags plus --url, --key and --json. */
export function parseClientFlags<T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  return parseFlags(args, { ...CLIENT_FLAGS, ...options });
}

/** The text of `options for every command` in the client commands' usage. */
export function clientFlagsUsage(keyVariable = 'KEEL_API_KEY', keyName = 'API key'): string {
  return `options for every command:
  --url <url>   Keel's API (default: $KEEL_URL, else ${DEFAULT_KEEL_URL})
  --key <key>   ${keyName} (default: $${keyVariable})
  --json        print raw JSON instead of formatted text`;
}

/** The base URL from --url, else $KEEL_URL, else the default; an http:// or https:// URL. */
export function keelUrl(values: { url?: string | undefined }, env: NodeJS.ProcessEnv): string {
  const baseUrl = values.url || env.KEEL_URL || DEFAULT_KEEL_URL;
  const from = values.url ? '--url' : env.KEEL_URL ? 'KEEL_URL' : 'the default';
  if (!URL.canParse(baseUrl)) throw new UsageError(`'${baseUrl}' (from ${from}) is not a URL`);
  if (!['http:', 'https:'].includes(new URL(baseUrl).protocol))
    throw new UsageError(`'${baseUrl}' (from ${from}) must be an http:// or https:// URL`);
  return baseUrl;
}

/**
 * A client for Keel at --url (else $KEEL_URL, else the default) with --key, else the key in
 * `keyVariable`.
 *
 * @example
 * const client = connect(values, io.env, 'KEEL_ADMIN_KEY');
 */
export function connect(
  values: { url?: string | undefined; key?: string | undefined },
  env: NodeJS.ProcessEnv,
  keyVariable = 'KEEL_API_KEY',
): KeelHttpClient {
  const apiKey = values.key || env[keyVariable];
  if (!apiKey) throw new UsageError(`no API key: set ${keyVariable} or pass --key <key>`);
  return new KeelHttpClient({ baseUrl: keelUrl(values, env), apiKey });
}
