// The allowlist's two checks: a name (exact or `*.suffix`) and port before resolution; the address
// after — public always, private/loopback/link-local only when the rule names that very IP.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addressAllowed,
  destinationOf,
  isPublicAddress,
  matchRule,
  narrowingRefusal,
} from './allowlist.ts';

describe('egress allowlist', () => {
  const rules = [
    { host: 'api.example.com', port: 443 },
    { host: '*.pkg.example.org', port: 443 },
    { host: '127.0.0.1', port: 8080 },
  ];

  it('matches names exactly or under a wildcard, and ports exactly', () => {
    assert.equal(matchRule(rules, 'API.example.com.', 443), rules[0]);
    assert.equal(matchRule(rules, 'api.example.com', 80), undefined);
    assert.equal(matchRule(rules, 'evil-api.example.com', 443), undefined);
    assert.equal(matchRule(rules, 'files.pkg.example.org', 443), rules[1]);
    assert.equal(matchRule(rules, 'pkg.example.org', 443), undefined, 'the wildcard needs a label');
    assert.equal(matchRule(rules, 'pkg.example.org.evil.com', 443), undefined);
    assert.equal(matchRule(rules, '127.0.0.1', 8080), rules[2]);
  });

  it('lets names resolve only to public addresses; private ones only by their own rule', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '169.254.169.254',
      '192.168.1.1',
      '::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
    ])
      assert.equal(addressAllowed(rules[0]!, address), false, address);
    assert.equal(addressAllowed(rules[0]!, '93.184.216.34'), true);
    assert.equal(addressAllowed(rules[0]!, '2606:2800:220:1::1'), true);
    assert.equal(addressAllowed(rules[2]!, '127.0.0.1'), true);
    assert.equal(addressAllowed(rules[2]!, '127.0.0.2'), false);
    assert.equal(isPublicAddress('not-an-ip'), false);
  });

  it('narrows by every tenant and run list, and names the first that refuses', () => {
    const tenant = { by: 'tenant' as const, allow: [{ host: '*.example.com', port: 443 }] };
    const run = { by: 'run' as const, allow: [{ host: 'api.example.com', port: 443 }] };
    assert.equal(narrowingRefusal([], 'anything.org', 1), undefined, 'no list narrows nothing');
    assert.equal(narrowingRefusal([tenant, run], 'api.example.com', 443), undefined);
    assert.equal(
      narrowingRefusal([tenant, run], 'www.example.com', 443),
      "not in the run's allowlist",
    );
    assert.equal(
      narrowingRefusal([tenant, run], 'api.example.com', 80),
      "not in the tenant's allowlist",
    );
    assert.equal(
      narrowingRefusal([{ by: 'run', allow: [] }], 'api.example.com', 443),
      "not in the run's allowlist",
      'an empty list allows nothing',
    );
  });

  it('writes destinations with IPv6 in brackets', () => {
    assert.equal(destinationOf('::1', 443), '[::1]:443');
    assert.equal(destinationOf('example.com', 80), 'example.com:80');
  });
});
