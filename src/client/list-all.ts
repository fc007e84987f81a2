// listAll() of every KeelRuns transport: page after page of list() until the last, refusing a
// cursor handed out twice (a server that never says "done") and stopping at LIST_ALL_MAX_PAGES.
import { KeelProtocolError } from './errors.ts';
import type { CallOptions } from './keel-runs.ts';
import type { ListRunsFilter, Run, RunPage } from './types.ts';

/** listAll() stops here rather than paging forever through a server that never says "done". */
export const LIST_ALL_MAX_PAGES = 10_000;

/** Every run matching `filter`, read with `list` one page at a time. */
export async function* listAllRuns(
  list: (filter: ListRunsFilter, options: CallOptions) => Promise<RunPage>,
  filter: Omit<ListRunsFilter, 'cursor'>,
  options: CallOptions,
): AsyncGenerator<Run, void, undefined> {
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (let page = 0; page < LIST_ALL_MAX_PAGES; page += 1) {
    const result = await list(cursor === undefined ? filter : { ...filter, cursor }, options);
    yield* result.runs;
    if (result.nextCursor === null) return;
    if (seen.has(result.nextCursor))
      throw new KeelProtocolError(`the server handed out cursor '${result.nextCursor}' twice`);
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
  throw new KeelProtocolError(`more than ${LIST_ALL_MAX_PAGES} pages of runs`);
}
