// The tool policy's rules as a table (policy, call → decision), and properties over generated
// policies and calls: the stricter of two policies applies, a deny pattern always wins, the empty
// policy allows everything, every generated policy passes its own schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { argumentsHash } from './approvals.ts';
import type { Json } from './json.ts';
import {
  evaluateOne,
  evaluatePolicy,
  matchesPattern,
  RISK_LEVELS,
  ToolPolicy,
  type PolicyDecision,
  type ProposedCall,
} from './tool-policy.ts';

const call = (tool: string, args: Json = {}, risk: ProposedCall['risk'] = 'low', cost = 0) => ({
  tool,
  args,
  risk,
  cost,
});

const TABLE: Array<[string, ToolPolicy, ProposedCall, PolicyDecision['kind'], string?]> = [
  ['empty policy allows', {}, call('anything'), 'allow'],
  ['deny list', { deny: ['exec'] }, call('exec'), 'deny', 'deny:exec'],
  [
    'deny pattern covers MCP tools',
    { deny: ['mcp:github.*'] },
    call('mcp:github.delete_repo'),
    'deny',
  ],
  ['deny wins over allow', { allow: ['*'], deny: ['rm'] }, call('rm'), 'deny'],
  ['allow list refuses others', { allow: ['search'] }, call('fetch'), 'deny', 'allow'],
  ['allow list admits its own', { allow: ['search', 'read_*'] }, call('read_file'), 'allow'],
  ['risk above maxRisk', { maxRisk: 'medium' }, call('t', {}, 'high'), 'deny', 'maxRisk'],
  ['risk at maxRisk', { maxRisk: 'medium' }, call('t', {}, 'medium'), 'allow'],
  ['cost above maxCost', { maxCost: 1 }, call('t', {}, 'low', 1.5), 'deny', 'maxCost'],
  [
    'pattern breach denies',
    { constraints: [{ tool: 'email', path: 'to', pattern: '@example\\.com$' }] },
    call('email', { to: 'x@evil.test' }),
    'deny',
    'constraints.0',
  ],
  [
    'pattern holds',
    { constraints: [{ tool: 'email', path: 'to', pattern: '@example\\.com$' }] },
    call('email', { to: 'a@example.com' }),
    'allow',
  ],
  [
    'enum breach',
    { constraints: [{ tool: '*', path: 'mode', enum: ['r', 'w'] }] },
    call('open', { mode: 'x' }),
    'deny',
  ],
  [
    'maximum on a nested path',
    { constraints: [{ tool: 'pay', path: 'payment.amount', maximum: 100 }] },
    call('pay', { payment: { amount: 101 } }),
    'deny',
  ],
  [
    'minimum holds',
    { constraints: [{ tool: 'pay', path: 'payment.amount', minimum: 0 }] },
    call('pay', { payment: { amount: 0 } }),
    'allow',
  ],
  [
    'maxLength on a string',
    { constraints: [{ tool: 'say', path: 'text', maxLength: 3 }] },
    call('say', { text: 'hello' }),
    'deny',
  ],
  [
    'missing value breaks only required',
    { constraints: [{ tool: 'say', path: 'text', maxLength: 3 }] },
    call('say', {}),
    'allow',
  ],
  [
    'required value missing',
    { constraints: [{ tool: 'say', path: 'text', required: true }] },
    call('say', {}),
    'deny',
  ],
  [
    'argument above threshold asks a human',
    { constraints: [{ tool: 'pay', path: 'amount', maximum: 100, approval: 'required' }] },
    call('pay', { amount: 500 }),
    'approval',
    'constraints.0',
  ],
  [
    'a hard breach wins over an approval breach',
    {
      constraints: [
        { tool: 'pay', path: 'amount', maximum: 100, approval: 'required' },
        { tool: 'pay', path: 'currency', enum: ['EUR'] },
      ],
    },
    call('pay', { amount: 500, currency: 'USD' }),
    'deny',
    'constraints.1',
  ],
  ['tool needs approval', { approval: { tools: ['send_*'] } }, call('send_email'), 'approval'],
  ['risk needs approval', { approval: { risk: 'high' } }, call('t', {}, 'critical'), 'approval'],
  [
    'risk below the approval level',
    { approval: { risk: 'high' } },
    call('t', {}, 'medium'),
    'allow',
  ],
  ['cost needs approval', { approval: { costAbove: 0.5 } }, call('t', {}, 'low', 0.75), 'approval'],
  ['deny wins over approval', { deny: ['t'], approval: { tools: ['t'] } }, call('t'), 'deny'],
];

test('policy rules, as a table', () => {
  for (const [name, policy, proposed, kind, rule] of TABLE) {
    assert.ok(ToolPolicy.safeParse(policy).success, `${name}: the policy parses`);
    const decision = evaluateOne(policy, proposed);
    assert.equal(decision.kind, kind, name);
    if (rule !== undefined) assert.equal((decision as { rule: string }).rule, rule, name);
  }
});

test('patterns: * is any run, everything else is literal', () => {
  assert.ok(matchesPattern('mcp:*', 'mcp:fs.read'));
  assert.ok(matchesPattern('*.read', 'mcp:fs.read'));
  assert.ok(!matchesPattern('a.b', 'aXb'), 'a dot is a dot');
  assert.ok(!matchesPattern('read', 'read_file'));
});

test('policies that do not parse are refused', () => {
  for (const bad of [
    { allow: 'search' },
    { deny: ['bad name!'] },
    { maxRisk: 'extreme' },
    { constraints: [{ tool: 't', path: 'a', pattern: '(' }] },
    { approval: { expiresAfterMs: 10 } },
    { unknownField: true },
  ])
    assert.equal(ToolPolicy.safeParse(bad).success, false, JSON.stringify(bad));
});

const toolName = fc.constantFrom(
  'search',
  'exec',
  'pay',
  'mcp:fs.read',
  'mcp:fs.write',
  'send_email',
);
const pattern = fc.oneof(toolName, fc.constantFrom('*', 'mcp:*', 'mcp:fs.*', 'send_*'));
const risk = fc.constantFrom(...RISK_LEVELS);
const policyArb: fc.Arbitrary<ToolPolicy> = fc.record(
  {
    allow: fc.array(pattern, { maxLength: 3 }),
    deny: fc.array(pattern, { maxLength: 2 }),
    maxRisk: risk,
    maxCost: fc.double({ min: 0, max: 10, noNaN: true }),
    constraints: fc.array(
      fc.record(
        {
          tool: pattern,
          path: fc.constantFrom('amount', 'to', 'nested.value'),
          maximum: fc.integer({ min: 0, max: 100 }),
          maxLength: fc.integer({ min: 0, max: 5 }),
          approval: fc.constant('required' as const),
        },
        { requiredKeys: ['tool', 'path'] },
      ),
      { maxLength: 3 },
    ),
    approval: fc.record(
      {
        tools: fc.array(pattern, { maxLength: 2 }),
        risk,
        costAbove: fc.double({ min: 0, max: 10, noNaN: true }),
        expiresAfterMs: fc.integer({ min: 1_000, max: 10_000_000 }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);
const argsArb = fc.record(
  {
    amount: fc.integer({ min: -10, max: 200 }),
    to: fc.string({ maxLength: 8 }),
    nested: fc.record({ value: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })) }),
  },
  { requiredKeys: [] },
);
const callArb = fc.record({
  tool: toolName,
  args: argsArb as fc.Arbitrary<Json>,
  risk,
  cost: fc.double({ min: 0, max: 20, noNaN: true }),
});
const SEVERITY = { allow: 0, approval: 1, deny: 2 };

test('property: generated policies parse, and evaluation is a function of its inputs', () => {
  fc.assert(
    fc.property(policyArb, callArb, (policy, proposed) => {
      assert.ok(ToolPolicy.safeParse(policy).success);
      assert.deepEqual(
        evaluateOne(policy, proposed),
        evaluateOne(policy, structuredClone(proposed)),
      );
    }),
  );
});

test('property: the stricter of two policies applies, in either order', () => {
  fc.assert(
    fc.property(policyArb, policyArb, callArb, (tenant, agent, proposed) => {
      const both = evaluatePolicy([tenant, agent], proposed);
      const alone = [evaluateOne(tenant, proposed), evaluateOne(agent, proposed)];
      const worst = Math.max(...alone.map((d) => SEVERITY[d.kind]));
      assert.equal(SEVERITY[both.kind], worst);
      assert.equal(evaluatePolicy([agent, tenant], proposed).kind, both.kind);
      if (both.kind === 'approval') {
        const expiries = alone.filter((d) => d.kind === 'approval').map((d) => d.expiresAfterMs);
        assert.equal(both.expiresAfterMs, Math.min(...expiries));
      }
    }),
  );
});

test('property: a matching deny pattern always denies; the empty policy always allows', () => {
  fc.assert(
    fc.property(policyArb, callArb, (policy, proposed) => {
      const withDeny = { ...policy, deny: [...(policy.deny ?? []), proposed.tool] };
      assert.equal(evaluatePolicy([withDeny, {}], proposed).kind, 'deny');
      assert.equal(evaluatePolicy([{}, undefined], proposed).kind, 'allow');
    }),
  );
});

test('property: the arguments hash ignores key order and sees every value', () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string({ maxLength: 4 }), fc.integer()), (record) => {
      const reversed = Object.fromEntries(Object.entries(record).reverse());
      assert.equal(argumentsHash(record), argumentsHash(reversed));
      assert.notEqual(argumentsHash(record), argumentsHash({ ...record, '\u0000extra': 1 }));
    }),
  );
});
