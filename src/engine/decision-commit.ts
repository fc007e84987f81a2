// Journals a fan-in's decision on the main thread (for the in-thread ctx and for isolates alike):
// one commit holds the decision entry, the `fanin.decided` event and the cancellation of the losing
// children, so no crash can separate them — a restart finds the decision and replays it, and the
// losers are `cancelling` already. Then the losing positions are abandoned: their waits no longer
// hold the run. It never decides anything itself (fan-in.ts does).
import { crashPoint } from '../domain/crash-points.ts';
import type { Json } from '../domain/json.ts';
import type { Decision } from './fan-in.ts';
import type { Position, RunPort } from './run-port.ts';

/** The decision entry's args: everything the decision says but its outcome. */
export function decisionArgs(d: Decision, cancelledRuns: string[]): Json {
  return {
    mode: d.mode,
    branch: d.branch,
    branchSeq: d.branchSeq,
    losers: d.losers,
    cancelledRuns,
    refused: d.refused,
    failed: d.failed,
  };
}

export async function commitDecision(x: RunPort, at: Position, d: Decision): Promise<void> {
  const { seq, entry } = at;
  if (entry !== undefined && (entry.status === 'succeeded' || entry.status === 'failed')) return; // replayed
  const write = {
    seq,
    kind: 'decision' as const,
    name: d.mode,
    status: d.ok ? ('succeeded' as const) : ('failed' as const),
    ...(d.ok ? { result: d.mode === 'all' ? null : d.value } : { error: d.error }),
    endedAt: x.clock.now(),
  };
  // Every branch succeeded: replay finds the same values, so the entry only marks the position and
  // rides with the next commit.
  if (d.mode === 'all' && d.ok) {
    x.piggyback({ ...write, args: decisionArgs(d, []) });
    return;
  }
  const cancelledRuns = x.childRunsAt(d.losers);
  const args = decisionArgs(d, cancelledRuns);
  await x.track('decision', async () => {
    await x.commit({
      journal: [{ ...write, args }],
      cancelRuns: cancelledRuns,
      events: [
        {
          type: 'fanin.decided',
          data: {
            seq,
            status: write.status,
            ...(args as Record<string, Json>),
            ...(d.ok ? {} : { code: d.error?.code ?? 'internal' }),
          },
        },
      ],
    });
    crashPoint('decision.committed');
    x.abandon(d.losers); // still in flight: the run cannot park on a loser's wait in between
  });
}
