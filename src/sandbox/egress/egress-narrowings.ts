// The tenant's and the run's egress lists for one sandbox call, read from the store: each list that
// exists narrows the profile's allowlist (domain/egress-scope.ts). Read per call, so a tenant's list
// patched over the admin API applies to the next call of every run. Fails closed: a tenant or run
// the store does not know gets an empty list (no destination), never no list.
import type { EgressNarrowing } from '../../domain/egress-scope.ts';
import type { Store } from '../../store/store.ts';

export function egressNarrowingsFrom(
  store: Pick<Store, 'getTenant' | 'getRun'>,
): (tenantId: string, runId: string) => Promise<EgressNarrowing[]> {
  return async (tenantId, runId) => {
    const [tenant, run] = await Promise.all([
      tenantId === '' ? null : store.getTenant(tenantId),
      runId === '' ? null : store.getRun(runId),
    ]);
    const narrowings: EgressNarrowing[] = [];
    const tenantAllow = tenant === null ? [] : tenant.egressAllow;
    if (tenantAllow !== null) narrowings.push({ by: 'tenant', allow: tenantAllow });
    const runAllow = run === null ? [] : run.egressAllow;
    if (runAllow !== null) narrowings.push({ by: 'run', allow: runAllow });
    return narrowings;
  };
}
