// Which destinations a sandbox may reach: a rule is a host pattern (an exact name, `*.suffix` for
// any name under it, or an IP literal) and a port. A name is checked before it is resolved and the
// address after: a name may only resolve to public addresses, so `allowed.example` pointing at
// 127.0.0.1 or 10.0.0.5 is refused (DNS rebinding, cloud metadata); private, loopback and
// link-local addresses are reachable only through a rule naming that very IP. Pure functions: the
// proxy (egress-proxy.ts) asks, nothing here does I/O. A tenant's and a run's lists only narrow
// the profile's (domain/egress-scope.ts): a destination must match every layer.
import { BlockList, isIP } from 'node:net';
import type { EgressDestination, EgressNarrowing } from '../../domain/egress-scope.ts';

/** How a credential is added to plain-HTTP requests to a rule's destination. */
export interface EgressInjection {
  /** Header to set (default `authorization`). */
  header: string;
  /** `secret:NAME` of the run's tenant. */
  secret: string;
  /** The header's value, `{secret}` standing for the secret (default `Bearer {secret}`). */
  format: string;
}

export interface EgressRule {
  host: string;
  port: number;
  inject?: EgressInjection | undefined;
}

/** Addresses a name may never resolve to; reachable only by a rule naming the IP itself. */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // An IPv4-mapped IPv6 address is its IPv4 address. (BlockList holds IPv4 as mapped addresses, so
  // ::ffff:0:0/96 in the list would block every IPv4 address.)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return isPublicAddress(mapped[1]!);
  return !NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  const h = host.toLowerCase().replace(/\.$/, '');
  if (p.startsWith('*.')) return h.endsWith(p.slice(1)) && h.length > p.length - 1;
  return p === h;
}

/** The first rule allowing `host:port` by name (before resolution), if any. */
export function matchRule<R extends EgressDestination>(
  rules: readonly R[],
  host: string,
  port: number,
): R | undefined {
  return rules.find((rule) => rule.port === port && hostMatches(rule.host, host));
}

/**
 * Why a tenant's or run's list refuses `host:port` (the first layer without a matching
 * destination), or undefined when every layer allows it. The profile's rule, checked before,
 * still decides the address check and any injection: a narrowing can only take away.
 */
export function narrowingRefusal(
  narrowings: readonly EgressNarrowing[],
  host: string,
  port: number,
): string | undefined {
  const refusing = narrowings.find((layer) => matchRule(layer.allow, host, port) === undefined);
  return refusing === undefined ? undefined : `not in the ${refusing.by}'s allowlist`;
}

/**
 * Whether `address` (what `host` resolved to) may be connected to under `rule`: a public address
 * always; any other only when the rule names that address as its host.
 */
export function addressAllowed(rule: EgressRule, address: string): boolean {
  if (isIP(rule.host) !== 0) return rule.host === address;
  return isPublicAddress(address);
}

/** `host:port` as written in records (IPv6 in brackets). */
export function destinationOf(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
