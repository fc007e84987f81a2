// A stdio MCP server in a sandbox profile, through the real client pool and sandbox manager: the
// server runs on an environment image (it reads the image's files, not the host's), inside its
// cgroup's limits (a pids limit stops it from starting more processes), with a network allowlist
// enforced by Keel's egress proxy (an allowed destination answers, with a credential the proxy
// adds from a secret the server never sees; another port on the same host is refused and
// recorded), and with a variable from a secret that reaches it through a pipe, never any process's
// command line. The server is a small probe written for this test (test/fixtures/
// mcp-probe-server.ts) running on the host's Node binary, bound into the image read-only.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Json } from '../src/domain/json.ts';
import { EgressProxy, type EgressRecord } from '../src/sandbox/egress/egress-proxy.ts';
import { ImageCache } from '../src/sandbox/images/image-cache.ts';
import { defineImage } from '../src/sandbox/images/image-spec.ts';
import { SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import { parseMcpServerConfig } from '../src/sdk/mcp-server-config.ts';
import { McpClientPool } from '../src/tools/mcp/client-pool.ts';
import { imageBuildSkipReason, sandboxRoot, skipUnless } from './support/sandbox.ts';

const MODULES = fileURLToPath(new URL('../node_modules/', import.meta.url)).replace(/\/$/, '');
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url)).replace(/\/$/, '');
const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url));
const PROBE = join(FIXTURES, 'mcp-probe-server.ts');
/** An image build takes a minute or more on this 2-core host. */
const BUILD_TIMEOUT_MS = 20 * 60 * 1000;
const TOKEN = 'canary-proxy-token-7f3a9c';
const ENV_TOKEN = 'canary-env-token-51d2e8';
const SECRETS: Record<string, string> = {
  'secret:PROBE_TOKEN': TOKEN,
  'secret:PROBE_ENV': ENV_TOKEN,
};
const IMAGE = defineImage({
  name: 'mcp-probe',
  // The host's Node binary needs the C++ runtime; the essential set has libc.
  packages: ['libstdc++6'],
  files: [{ path: '/etc/keel-image-marker', content: 'the mcp-probe image' }],
});
const call = { executionId: 'run_probe.1', signal: new AbortController().signal };

const sandbox = sandboxRoot();
const images = new ImageCache({ dir: join(sandbox.root, '..', 'images') });
const records: EgressRecord[] = [];
const reveals: string[] = [];
const revealSecret = async (_tenantId: string, ref: string) => {
  reveals.push(ref);
  const value = SECRETS[ref];
  if (value === undefined) throw new Error(`no ${ref}`);
  return value;
};
const manager = new SandboxManager({
  root: sandbox.root,
  artifacts: sandbox.artifacts,
  images,
  revealSecret,
  egress: new EgressProxy({ onRecord: (record) => records.push(record), revealSecret }),
});
const pool = new McpClientPool({
  allowedOrigins: [],
  env: () => undefined,
  sandboxes: () => manager,
});

/** What the allowed destination saw. */
const seen: IncomingHttpHeaders[] = [];
const allowed = createServer((req, res) => {
  seen.push(req.headers);
  res.end('hello from the allowed host');
});
const refused = createServer((_req, res) => res.end('must not be reached'));
let skip: string | undefined;

before(async () => {
  skip = skipUnless('namespace') ?? (await imageBuildSkipReason(images.mirror, 'bookworm'));
  await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => refused.listen(0, '127.0.0.1', resolve));
});

after(async () => {
  await pool.close();
  await manager.close();
  await images.close();
  allowed.close();
  refused.close();
  sandbox.cleanup();
});

const portOf = (server: typeof allowed) => (server.address() as AddressInfo).port;

function probeConfig() {
  return parseMcpServerConfig({
    name: 'probe',
    transport: {
      type: 'stdio',
      command: process.execPath,
      args: [PROBE],
      // Node's fetch takes the proxy variables the sandbox sets only when asked to.
      env: { NODE_USE_ENV_PROXY: '1' },
      readOnlyPaths: [MODULES, FIXTURES, PACKAGE_JSON],
      sandbox: {
        image: IMAGE,
        limits: { pidsMax: 40, memoryBytes: 512 * 1024 * 1024 },
        network: {
          allow: [
            {
              host: '127.0.0.1',
              port: portOf(allowed),
              inject: { header: 'authorization', secret: 'secret:PROBE_TOKEN' },
            },
          ],
        },
        secrets: { env: { PROBE_ENV_TOKEN: 'secret:PROBE_ENV' } },
      },
    },
  });
}

async function probe(tool: string, args: Record<string, unknown>): Promise<any> {
  const answer = (await pool.callTool('tenant-a', probeConfig(), tool, args, call)) as {
    content: Array<{ text: string }>;
  } & Json;
  return JSON.parse(answer.content[0]!.text);
}

/** Every process's command line on the host, joined (the canary must appear in none). */
function allCommandLines(): string {
  const lines: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8'));
    } catch {
      // gone meanwhile
    }
  }
  return lines.join('\n');
}

test('a stdio MCP server in a sandbox profile: image, limits, allowlist, secrets', {
  timeout: BUILD_TIMEOUT_MS,
}, async (t) => {
  if (skip !== undefined) return t.skip(skip);
  await images.ensure(IMAGE); // built before the first call, so the call's connect does not wait

  // The image is the server's root: its own files, and nothing of the host's /etc or home.
  assert.deepEqual(await probe('read_file', { path: '/etc/keel-image-marker' }), {
    ok: true,
    content: 'the mcp-probe image',
  });
  assert.deepEqual(
    await probe('read_file', { path: PACKAGE_JSON.replace('package.json', 'README.md') }),
    {
      ok: false,
      error: 'ENOENT',
    },
  );

  // The allowlisted destination answers, and the proxy added the credential on the way out.
  const fetched = await probe('fetch_url', {
    url: `http://127.0.0.1:${portOf(allowed)}/hello`,
    headerFromEnv: 'PROBE_ENV_TOKEN',
  });
  assert.deepEqual(fetched, { ok: true, status: 200, body: 'hello from the allowed host' });
  assert.equal(seen.at(-1)?.authorization, `Bearer ${TOKEN}`);
  // The variable from a secret reached the server (it sent it back as a header).
  assert.equal(seen.at(-1)?.['x-from-env'], ENV_TOKEN);
  // The proxy's credential is never the server's: not among its variables.
  const names = (await probe('env_names', {})) as string[];
  assert.ok(names.includes('PROBE_ENV_TOKEN'));
  assert.ok(!names.some((name) => name.includes('PROBE_TOKEN') && name !== 'PROBE_ENV_TOKEN'));

  // Another port on the same host is not on the allowlist: refused, and recorded as denied.
  const denied = await probe('fetch_url', { url: `http://127.0.0.1:${portOf(refused)}/` });
  assert.notEqual(denied.ok && denied.body, 'must not be reached');
  const verdicts = records.map((r) => [r.destination, r.verdict, r.service, r.tenantId]);
  assert.deepEqual(verdicts, [
    [`127.0.0.1:${portOf(allowed)}`, 'allowed', 'mcp:probe', 'tenant-a'],
    [`127.0.0.1:${portOf(refused)}`, 'denied', 'mcp:probe', 'tenant-a'],
  ]);
  assert.deepEqual(records[0]?.injected, ['secret:PROBE_TOKEN']);

  // The cgroup's pids limit holds: the server cannot start 100 more processes.
  const spawned = (await probe('spawn_many', { count: 100 })) as { started: number };
  assert.ok(spawned.started > 0 && spawned.started < 40, JSON.stringify(spawned));

  // Neither secret is on any process's command line on this host while the server runs.
  const lines = allCommandLines();
  assert.ok(!lines.includes(TOKEN) && !lines.includes(ENV_TOKEN));
  assert.ok(reveals.includes('secret:PROBE_ENV') && reveals.includes('secret:PROBE_TOKEN'));
});
