// The threat suite through the built-in tools, over HTTP: a real Keel (API + orchestrator) runs an
// agent that calls exec, read_file, write_file and list_files on every tier this host has, and the
// attacks a model could make through the tools' arguments are asserted to fail — paths read as
// options (`-delete`, `-exec`, `--help`), absolute paths, `..`, symbolic links out of the workspace,
// listings forged by a newline in a name — and a workspace of many files neither stalls Keel's main
// thread while it is snapshotted nor gets past its profile's maxFiles. A missing tier is a skip
// with its reason, never a pass.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { defineAgent } from '../src/sdk/define.ts';
import { FileArtifactStore } from '../src/sandbox/file-artifact-store.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { runRef, SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import { TIERS, type Tier } from '../src/sandbox/tiers.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';
import { skipUnless } from './support/sandbox.ts';

/** Files the many-files attack creates: enough that a walk on the main thread shows. */
const MANY_FILES = 10_000;
const MAX_FILES = 12_000;
const RUN_TIMEOUT_MS = 120_000;
/**
 * How often the test looks for a workspace walk in flight. A walk on the main thread would be one
 * synchronous macrotask: no timer could fire during it, so no request could be sent while it runs.
 */
const POLL_MS = 2;

type Call = { tool: 'exec' | 'read_file' | 'write_file' | 'list_files'; args: unknown };
type Outcome = { ok: true; value: any } | { ok: false; code: string; message: string };

const toolsByTier = Object.fromEntries(
  TIERS.map((tier) => [
    tier,
    sandboxTools({
      profile: defineSandboxProfile({
        name: `threat-tools-${tier}`,
        tier,
        policy: 'resident',
        limits: { maxFiles: MAX_FILES, deadlineMs: 60_000 },
      }),
      prefix: `${tier}_`,
    }),
  ]),
) as Record<Tier, ReturnType<typeof sandboxTools>>;

/** Runs the calls in order; a failed call is recorded with its error code, not thrown. */
const caller = defineAgent({
  name: 'tool-caller',
  version: '1',
  async run(ctx, input: { tier: Tier; calls: Call[] }) {
    const tools = toolsByTier[input.tier];
    const outcomes: Outcome[] = [];
    for (const call of input.calls) {
      try {
        outcomes.push({
          ok: true,
          value: await ctx.tool(tools[call.tool] as any, call.args as any),
        });
      } catch (error) {
        const { code, message } = error as { code: string; message: string };
        outcomes.push({ ok: false, code, message });
      }
    }
    return { outcomes } as any;
  },
});

for (const tier of TIERS) {
  describe(`the built-in tools under attack on ${tier}`, { skip: skipUnless(tier) }, () => {
    let keel: TestKeel;
    let manager: SandboxManager;
    let artifacts: FileArtifactStore;
    const base = mkdtempSync(join(tmpdir(), 'keel-threat-tools-'));
    chmodSync(base, 0o711);
    /** A host directory the sandbox uid could write to, if a tool followed a link there. */
    const hostDir = join(base, 'host-open');

    before(async () => {
      artifacts = new FileArtifactStore(join(base, 'artifacts'));
      manager = new SandboxManager({ root: join(base, 'sandboxes'), artifacts });
      keel = await startKeel({
        agents: [caller],
        dir: mkdtempSync(join(base, 'keel-')),
        orchestrator: { toolNode: { dataDir: base, sandboxManager: () => manager } },
      });
      const { mkdirSync } = await import('node:fs');
      mkdirSync(hostDir, { mode: 0o777 });
      chmodSync(hostDir, 0o777);
    });

    after(async () => {
      await keel?.close();
      await manager?.close();
      rmSync(base, { recursive: true, force: true });
    });

    /** Submits one run of the calls over HTTP and waits for its outcomes. */
    async function calls(
      list: Call[],
      watch?: () => void,
    ): Promise<{ id: string; outcomes: Outcome[] }> {
      const submitted = await keel.request('POST', '/v1/runs', {
        agent: 'tool-caller',
        input: { tier, calls: list },
      });
      assert.equal(submitted.status, 201, JSON.stringify(submitted.body));
      watch?.();
      const run = await keel.waitForRun(
        submitted.body.id,
        (r) => TERMINAL.has(r.status),
        RUN_TIMEOUT_MS,
      );
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      return { id: run.id, outcomes: run.result.outcomes };
    }

    const codeOf = (outcome: Outcome | undefined) =>
      outcome === undefined ? 'missing' : outcome.ok ? 'ok' : outcome.code;

    test('a path is never an option or a find expression: -delete, -exec, --help are refused and delete nothing', async () => {
      const attacks = [
        '-delete',
        '-exec',
        '--help',
        './-delete',
        './/-delete',
        '-fprint',
        '/etc',
        '/',
        '..',
        'a/../../etc',
        'x\0y',
      ];
      const { id, outcomes } = await calls([
        { tool: 'write_file', args: { path: 'keep/me.txt', content: 'still here' } },
        ...attacks.map((path): Call => ({ tool: 'list_files', args: { path } })),
        ...attacks.map((path): Call => ({ tool: 'read_file', args: { path } })),
        ...attacks.map((path): Call => ({ tool: 'write_file', args: { path, content: 'x' } })),
        { tool: 'read_file', args: { path: 'keep/me.txt' } },
        { tool: 'list_files', args: {} },
      ]);
      const [written, ...rest] = outcomes;
      assert.equal(codeOf(written), 'ok');
      const refused = rest.slice(0, attacks.length * 3);
      assert.deepEqual(
        refused.map(codeOf),
        refused.map(() => 'tool_input_invalid'),
        JSON.stringify(refused),
      );
      const [read, listed] = rest.slice(attacks.length * 3);
      assert.deepEqual((read as any).value, { content: 'still here', truncated: false });
      assert.deepEqual((listed as any).value.files.map((f: any) => `${f.kind} ${f.path}`).sort(), [
        'directory keep',
        'file keep/me.txt',
      ]);
      // Reads commit no snapshot: the run's latest manifest is still the one write_file made.
      assert.equal(await artifacts.getRef(runRef(id)), (written as any).value.workspace.manifest);
    });

    test('a listing cannot be forged by a newline in a name', async () => {
      const forged = 'real\nf 4096 forged.txt\nd 0 fake-dir';
      const { outcomes } = await calls([
        {
          tool: 'exec',
          args: {
            argv: ['/bin/sh', '-c', 'mkdir d && : > "d/$1" && : > "d/-delete"', 'sh', forged],
          },
        },
        { tool: 'list_files', args: { path: 'd' } },
        { tool: 'list_files', args: {} },
      ]);
      assert.equal(codeOf(outcomes[0]), 'ok', JSON.stringify(outcomes[0]));
      assert.deepEqual((outcomes[1] as any).value.files.map((f: any) => f.path).sort(), [
        'd/-delete',
        `d/${forged}`,
      ]);
      assert.deepEqual(
        (outcomes[2] as any).value.files.map((f: any) => `${f.kind} ${f.path}`).sort(),
        ['directory d', 'file d/-delete', `file d/${forged}`],
      );
    });

    test('read_file, write_file and list_files never follow a symbolic link, in or out of the workspace', async () => {
      const { outcomes } = await calls([
        {
          tool: 'exec',
          args: {
            argv: [
              '/bin/sh',
              '-c',
              `ln -s ${hostDir} out && ln -s /etc/passwd pw && mkdir in && ln -s in inner && echo x > in/f`,
            ],
          },
        },
        { tool: 'write_file', args: { path: 'out/pwned.txt', content: 'pwned' } },
        { tool: 'write_file', args: { path: 'out/deep/pwned.txt', content: 'pwned' } },
        { tool: 'write_file', args: { path: 'pw', content: 'pwned' } },
        { tool: 'read_file', args: { path: 'pw' } },
        { tool: 'read_file', args: { path: 'inner/f' } },
        { tool: 'list_files', args: { path: 'out' } },
        { tool: 'list_files', args: { path: 'inner' } },
        { tool: 'read_file', args: { path: 'in/f' } },
      ]);
      assert.equal(codeOf(outcomes[0]), 'ok', JSON.stringify(outcomes[0]));
      assert.deepEqual(
        outcomes.slice(1, 8).map(codeOf),
        Array(7).fill('workspace_path_invalid'),
        JSON.stringify(outcomes),
      );
      assert.match((outcomes[1] as any).message, /symbolic link/);
      assert.deepEqual(readdirSync(hostDir), [], 'nothing was written on the host');
      assert.equal((outcomes[8] as any).value.content, 'x\n', 'the real path still reads');
    });

    test("many files: Keel's main thread answers /healthz while the workspace is snapshotted, and maxFiles gives workspace_limit", async () => {
      const make = (count: number, dir: string): Call => ({
        tool: 'exec',
        args: {
          argv: [
            '/bin/sh',
            '-c',
            `mkdir -p ${dir} && cd ${dir} && seq -f f%g 1 ${count} | xargs touch`,
          ],
        },
      });
      let sentDuringSnapshot = 0;
      const answers: number[] = [];
      let done = false;
      const watch = () => {
        const poll = async () => {
          while (!done) {
            if (manager.snapshotWalksRunning() > 0) {
              sentDuringSnapshot++;
              answers.push((await fetch(`${keel.url}/healthz`)).status);
            } else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
          }
        };
        void poll();
      };
      let result: { outcomes: Outcome[] };
      try {
        result = await calls(
          [
            make(MANY_FILES, 'many'),
            { tool: 'exec', args: { argv: ['/bin/true'] } },
            make(MAX_FILES - MANY_FILES + 10, 'more'),
            { tool: 'exec', args: { argv: ['/bin/rm', '-rf', 'more'] } },
            { tool: 'exec', args: { argv: ['/bin/sh', '-c', 'echo recovered'] } },
          ],
          watch,
        );
      } finally {
        done = true;
      }
      const [made, again, over, removed, recovered] = result.outcomes;
      assert.equal(codeOf(made), 'ok', JSON.stringify(made));
      assert.equal(codeOf(again), 'ok', JSON.stringify(again));
      assert.ok(
        sentDuringSnapshot > 0,
        'no /healthz request could even be sent while a snapshot was walked: the main thread was blocked',
      );
      assert.deepEqual(
        answers,
        answers.map(() => 200),
      );
      assert.equal(codeOf(over), 'workspace_limit', JSON.stringify(over));
      assert.match((over as any).message, new RegExp(`more than ${MAX_FILES} entries`));
      assert.equal(codeOf(removed), 'ok', JSON.stringify(removed));
      assert.equal((recovered as any).value.stdout, 'recovered\n');
      assert.equal(existsSync(join(hostDir, 'x')), false);
    });
  });
}
