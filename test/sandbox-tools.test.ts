// The built-in tools called the way the engine calls them (validated input, a ToolContext), on real
// sandboxes: the env allowlist, path validation, write → read → list round trips, and the process
// tier's typed limits. The tools find the node's sandbox manager in their context (`ctx.node`)
// unless one is passed to sandboxTools().
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { runRef, SandboxManager } from '../src/sandbox/sandbox-manager.ts';
import type { ToolContext, ToolDefinition, ToolNode } from '../src/sdk/types.ts';
import type { ToolDelegation } from '../src/domain/delegation.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { newManager, sandboxRoot, skipUnless } from './support/sandbox.ts';

const { manager, cleanup } = newManager();
after(cleanup);

const NODE: ToolNode = { dataDir: undefined, sandboxManager: () => manager };

let seq = 0;
function call<I>(
  tool: ToolDefinition<I, any>,
  args: unknown,
  runId: string,
  node = NODE,
  delegation?: ToolDelegation,
): Promise<any> {
  const parsed = tool.input.safeParse(args);
  if (!parsed.success)
    return Promise.reject(
      Object.assign(new Error(parsed.error.message), { code: 'tool_input_invalid' }),
    );
  const ctx: ToolContext = {
    executionId: `${runId}.${++seq}`,
    runId,
    tenantId: 'ten_tools',
    attempt: 1,
    signal: new AbortController().signal,
    node,
    ...(delegation === undefined ? {} : { delegation }),
  };
  return Promise.resolve(tool.run(parsed.data, ctx));
}

test('exec takes only allowlisted variables; paths must stay inside the workspace; files round-trip', {
  skip: skipUnless('namespace'),
}, async () => {
  // No manager passed: the tools use the node's, from their context.
  const tools = sandboxTools({
    profile: defineSandboxProfile({ name: 'tools-ns', tier: 'namespace', policy: 'resident' }),
    envAllowlist: ['GREETING'],
  });
  const runId = `tools-${process.pid}`;
  const ok = await call(
    tools.exec,
    { argv: ['/bin/sh', '-c', 'echo "$GREETING"'], env: { GREETING: 'hi' } },
    runId,
  );
  assert.equal(ok.stdout, 'hi\n');
  assert.equal(ok.exitCode, 0);
  assert.match(ok.workspace.manifest, /^[0-9a-f]{64}$/);
  await assert.rejects(
    call(tools.exec, { argv: ['/usr/bin/env'], env: { LD_PRELOAD: '/x.so' } }, runId),
    { code: 'tool_input_invalid' },
  );
  await assert.rejects(call(tools.read_file, { path: '../etc/passwd' }, runId), {
    code: 'tool_input_invalid',
  });
  await assert.rejects(call(tools.write_file, { path: '/etc/passwd', content: 'x' }, runId), {
    code: 'tool_input_invalid',
  });
  await call(tools.write_file, { path: 'a/b/c.txt', content: 'hello' }, runId);
  assert.deepEqual(await call(tools.read_file, { path: 'a/b/c.txt' }, runId), {
    content: 'hello',
    truncated: false,
  });
  const listed = await call(tools.list_files, {}, runId);
  assert.deepEqual(
    listed.files.map((f: { path: string; kind: string }) => `${f.kind} ${f.path}`).sort(),
    ['directory a', 'directory a/b', 'file a/b/c.txt'],
  );
  // A symlink planted to a host file is read through the sandbox's view: the host file is not
  // there.
  await call(tools.exec, { argv: ['/bin/ln', '-s', '/etc/shadow', 'leak'] }, runId);
  await assert.rejects(call(tools.read_file, { path: 'leak' }, runId), {
    code: 'workspace_path_invalid',
  });
  await manager.endRun(runId);
});

test('the process tier: its own unprivileged uid, a scrubbed environment, no network, typed limits', {
  skip: skipUnless('process'),
}, async () => {
  const profile = defineSandboxProfile({
    name: 'tools-proc',
    tier: 'process',
    policy: 'one-shot',
    limits: { memoryBytes: 64 * 1024 * 1024, outputMaxBytes: 4096, deadlineMs: 5_000 },
  });
  const tools = sandboxTools({ manager, profile });
  const runId = `proc-${process.pid}`;
  process.env.KEEL_TOOLS_TEST_SECRET = 'do-not-leak';
  try {
    const who = await call(
      tools.exec,
      {
        argv: [
          '/bin/sh',
          '-c',
          'id -u; env; (echo > /dev/tcp/127.0.0.1/22) 2>&1 || echo no-network',
        ],
      },
      runId,
    );
    const [uid] = who.stdout.split('\n');
    assert.ok(Number(uid) >= 200_000, `runs as ${uid}`);
    assert.ok(!who.stdout.includes('do-not-leak') && !who.stdout.includes('KEEL_'), who.stdout);
    const net = await call(
      tools.exec,
      {
        argv: [
          '/usr/bin/bash',
          '-c',
          '(echo > /dev/tcp/127.0.0.1/5432) 2>/dev/null && echo REACHED || echo unreachable',
        ],
      },
      runId,
    );
    assert.equal(net.stdout.trim(), 'unreachable');
  } finally {
    delete process.env.KEEL_TOOLS_TEST_SECRET;
  }
  assert.equal((await call(tools.exec, { argv: ['/usr/bin/yes'] }, runId)).limit, 'output_limit');
  assert.equal(
    (await call(tools.exec, { argv: ['/bin/sleep', '30'], timeoutMs: 300 }, runId)).limit,
    'timeout',
  );
  assert.equal(
    (
      await call(
        tools.exec,
        { argv: ['/bin/sh', '-c', 'x=a; while true; do x="$x$x"; done'] },
        runId,
      )
    ).limit,
    'oom',
  );
  await manager.endRun(runId);
});

test('without a manager passed or lent by the node, a tool fails with sandbox_unavailable', async () => {
  const tools = sandboxTools({
    profile: defineSandboxProfile({ name: 'tools-none', tier: 'process', policy: 'one-shot' }),
  });
  const detached: ToolNode = { dataDir: undefined, sandboxManager: () => undefined };
  await assert.rejects(call(tools.exec, { argv: ['/bin/true'] }, `none-${process.pid}`, detached), {
    code: 'sandbox_unavailable',
  });
});

test('read_file and list_files commit no workspace snapshot; exec and write_file do', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const { root, artifacts, cleanup } = sandboxRoot();
  const own = new SandboxManager({ root, artifacts });
  t.after(async () => {
    await own.close();
    cleanup();
  });
  const tools = sandboxTools({
    manager: own,
    profile: defineSandboxProfile({ name: 'tools-reads', tier: 'namespace', policy: 'resident' }),
  });
  const runId = `reads-${process.pid}`;
  const written = await call(tools.write_file, { path: 'a.txt', content: 'a' }, runId);
  assert.equal(await artifacts.getRef(runRef(runId)), written.workspace.manifest);
  // A file appears in the resident workspace behind the tools' back: any snapshot would see it.
  const [id] = readdirSync(root).filter((name) => !name.startsWith('.'));
  writeFileSync(join(root, id!, 'planted.txt'), 'p');
  assert.equal((await call(tools.read_file, { path: 'planted.txt' }, runId)).content, 'p');
  const listed = await call(tools.list_files, {}, runId);
  assert.equal(listed.files.length, 2);
  assert.equal(
    await artifacts.getRef(runRef(runId)),
    written.workspace.manifest,
    'reads left the latest snapshot as it was',
  );
  const ran = await call(tools.exec, { argv: ['/bin/true'], effect: 'read' }, runId);
  assert.notEqual(ran.workspace.manifest, written.workspace.manifest, 'exec snapshots');
  assert.equal(await artifacts.getRef(runRef(runId)), ran.workspace.manifest);
  await own.endRun(runId);
});

test('exec takes its effect class from the call, else from the profile, else side-effect', () => {
  const plain = sandboxTools({
    profile: defineSandboxProfile({ name: 'fx-plain', tier: 'process' }),
  });
  const readOnly = sandboxTools({
    profile: defineSandboxProfile({ name: 'fx-read', tier: 'process', execEffect: 'read' }),
  });
  const effectOf = (tool: ToolDefinition<any, any>, args: unknown) =>
    tool.effectOf!(tool.input.parse(args));
  assert.equal(effectOf(plain.exec, { argv: ['ls'] }), 'side-effect');
  assert.equal(effectOf(plain.exec, { argv: ['ls'], effect: 'idempotent' }), 'idempotent');
  assert.equal(effectOf(readOnly.exec, { argv: ['ls'] }), 'read');
  assert.equal(
    effectOf(readOnly.exec, { argv: ['rm', 'x'], effect: 'side-effect' }),
    'side-effect',
  );
  assert.equal(plain.exec.input.safeParse({ argv: ['ls'], effect: 'harmless' }).success, false);
});

test('exec of a profile that opts in hands its program the run’s delegated token in the environment, never on argv; others get none', {
  skip: skipUnless('process'),
}, async () => {
  const delegation: ToolDelegation = {
    token: 'kdt_sandbox-test-token.sig',
    expiresAt: Date.now() + 60_000,
    apiUrl: 'http://127.0.0.1:7070',
    scopes: ['runs:read-self', 'runs:child'],
  };
  const opted = sandboxTools({
    profile: defineSandboxProfile({
      name: 'tools-delegated',
      tier: 'process',
      delegate: ['runs:read-self', 'runs:child'],
    }),
    envAllowlist: ['KEEL_RUN_TOKEN', 'GREETING'],
  });
  // The engine mints a token only for a tool that declares `delegate`: the profile's exec does.
  assert.deepEqual(opted.exec.delegate, ['runs:read-self', 'runs:child']);
  assert.equal(opted.read_file.delegate, undefined);
  const script = 'echo "$KEEL_RUN_TOKEN|$KEEL_API_URL"; tr "\\0" " " < /proc/$$/cmdline';
  const runId = `delegated-${process.pid}`;
  const seen = await call(opted.exec, { argv: ['/bin/sh', '-c', script] }, runId, NODE, delegation);
  const [env, argv] = seen.stdout.split('\n');
  assert.equal(env, `${delegation.token}|${delegation.apiUrl}`);
  assert.equal(argv.includes(delegation.token), false, 'the token is not on the program’s argv');
  // A call cannot set (or replace) the token's variables, even when allowlisted.
  await assert.rejects(
    call(
      opted.exec,
      { argv: ['/bin/true'], env: { KEEL_RUN_TOKEN: 'x' } },
      runId,
      NODE,
      delegation,
    ),
    { code: 'tool_input_invalid' },
  );
  // A profile that does not opt in: no token reaches its program.
  const plain = sandboxTools({
    profile: defineSandboxProfile({ name: 'tools-undelegated', tier: 'process' }),
  });
  assert.equal(plain.exec.delegate, undefined);
  const none = await call(
    plain.exec,
    { argv: ['/bin/sh', '-c', 'echo "[$KEEL_RUN_TOKEN]"'] },
    runId,
    NODE,
    delegation,
  );
  assert.equal(none.stdout, '[]\n');
});
