// `keel policy` and `keel approvals` against a real Keel over HTTP: a policy set from a file and
// read back (and, with --tenant, by the platform admin); a bad document is a usage error (exit 2);
// pending calls listed across runs; one approved (the run finishes with the tool's result), one
// denied with a note (the agent gets tool_denied_by_approver); a second decision fails (exit 1).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { runApprovalsCommand } from '../src/cli/client/approvals-command.ts';
import { runPolicyCommand } from '../src/cli/client/policy-command.ts';
import { isKeelError } from '../src/domain/keel-error.ts';
import { defineAgent, defineTool } from '../src/index.ts';
import { captureCli } from './support/cli-capture.ts';
import { startKeel, TERMINAL } from './support/keel-server.ts';

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service',
  input: z.object({ service: z.string() }),
  effect: 'side-effect',
  risk: 'critical',
  run: ({ service }) => ({ deployed: service }),
});

const deployer = defineAgent({
  name: 'deployer',
  version: '1',
  tools: [deploy],
  async run(ctx, input: { service: string }) {
    try {
      return await ctx.tool(deploy, { service: input.service });
    } catch (error) {
      return { code: isKeelError(error) ? error.code : 'other' };
    }
  },
});

test('keel policy get|set and keel approvals list|approve|deny', async (t) => {
  const keel = await startKeel({ agents: [deployer] });
  t.after(() => keel.close());
  const env = { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey, KEEL_ADMIN_KEY: keel.adminKey };
  const policy = (argv: string[]) => captureCli(runPolicyCommand, env, argv);
  const approvals = (argv: string[]) => captureCli(runApprovalsCommand, env, argv);

  const file = join(keel.dir, 'policy.json');
  writeFileSync(file, JSON.stringify({ approval: { risk: 'high' } }));
  const set = await policy(['set', file]);
  assert.equal(set.code, 0, set.err);
  const got = await policy(['get', '--json']);
  assert.deepEqual(JSON.parse(got.out), { policy: { approval: { risk: 'high' } } });
  writeFileSync(join(keel.dir, 'bad.json'), '{ nope');
  const bad = await policy(['set', join(keel.dir, 'bad.json')]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /not JSON/);
  writeFileSync(join(keel.dir, 'wrong.json'), JSON.stringify({ maxRisk: 'extreme' }));
  assert.equal((await policy(['set', join(keel.dir, 'wrong.json')])).code, 1);
  const tenants = await keel.request('GET', '/v1/admin/tenants', undefined, keel.adminKey);
  const asAdmin = await policy(['get', '--tenant', tenants.body.tenants[0].id]);
  assert.equal(asAdmin.code, 0, asAdmin.err);
  assert.match(asAdmin.out, /"risk": "high"/);

  const ids: string[] = [];
  for (const service of ['web', 'db']) {
    const created = await keel.request('POST', '/v1/runs', {
      agent: 'deployer',
      input: { service },
    });
    ids.push(created.body.id);
    await keel.waitForRun(created.body.id, (r) => r.waitingReason === 'approval');
  }
  const listed = await approvals(['list']);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.out, /deployer +deploy +critical +pending .*\{"service":"db"\}/);
  assert.match(listed.out, /\{"service":"web"\}/);
  const paged = await approvals(['list', '--limit', '1']);
  assert.match(paged.out, /more: --cursor /);

  const approved = await approvals(['approve', ids[0]!, `${ids[0]}.1`, '--note', 'go']);
  assert.equal(approved.code, 0, approved.err);
  assert.match(approved.out, /^approved deploy/);
  const denied = await approvals(['deny', ids[1]!, `${ids[1]}.1`, '--note', 'not today']);
  assert.equal(denied.code, 0, denied.err);
  const again = await approvals(['deny', ids[1]!, `${ids[1]}.1`]);
  assert.equal(again.code, 1);
  assert.match(
    again.err,
    /approval_already_decided|run_terminal/,
    'decided already, or the run ended since',
  );
  assert.equal((await approvals(['approve', ids[0]!])).code, 2);

  const first = await keel.waitForRun(ids[0]!, (r) => TERMINAL.has(r.status));
  assert.deepEqual(first.result, { deployed: 'web' });
  const second = await keel.waitForRun(ids[1]!, (r) => TERMINAL.has(r.status));
  assert.deepEqual(second.result, { code: 'tool_denied_by_approver' });
  const empty = await approvals(['list']);
  assert.match(empty.out, /no approval requests/);
  const all = await approvals(['list', '--status', 'all', '--json']);
  assert.deepEqual(
    JSON.parse(all.out).approvals.map((a: { status: string; note: string }) => [a.status, a.note]),
    [
      ['denied', 'not today'],
      ['approved', 'go'],
    ],
  );
});
