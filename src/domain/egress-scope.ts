// A tenant's or a run's egress allowlist: destinations (host pattern and port) that may only NARROW
// what a sandbox profile allows. The profile says what its environment may ever reach; a tenant's
// list (admin API) and a run's list (given at creation, stored with the run) each cut that down, and
// a connection leaves only when every layer allows it. No layer can widen another or carry a
// credential: injections stay the profile's. Shared by the API, the store and the egress proxy.
import { z } from 'zod';

/** Most destinations one tenant or run list holds. */
export const EGRESS_SCOPE_DESTINATIONS_MAX = 64;

/** One destination: a host name, `*.suffix` or an IP literal, and a port. */
export interface EgressDestination {
  host: string;
  port: number;
}

export const EgressHostSchema = z
  .string()
  .regex(/^(\*\.)?[A-Za-z0-9.:-]{1,253}$/, 'a host name, *.suffix or an IP address');

export const EgressDestinationSchema = z.strictObject({
  host: EgressHostSchema,
  port: z.number().int().min(1).max(65535),
});

/**
 * A narrowing list: null (absent) narrows nothing; `[]` allows no destination at all.
 */
export const EgressScopeSchema = z
  .array(EgressDestinationSchema)
  .max(EGRESS_SCOPE_DESTINATIONS_MAX)
  .nullable();

/** A list that narrows a profile's allowlist, and whose it is (named in a denial's reason). */
export interface EgressNarrowing {
  by: 'tenant' | 'run';
  allow: readonly EgressDestination[];
}

/** The stored JSON text of a list (null: no list), read back leniently: a bad value allows nothing. */
export function parseEgressScope(text: unknown): EgressDestination[] | null {
  if (text === null || text === undefined) return null;
  try {
    const parsed = EgressScopeSchema.safeParse(JSON.parse(String(text)));
    // A list that no longer parses must not widen anything: it narrows to nothing.
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}
