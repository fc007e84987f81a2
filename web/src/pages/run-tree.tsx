// A run's family on its page: the root of its tree (found by walking up parentRunId) and every
// descendant, indented under its parent, each with its status, agent and what it does when its
// parent ends (cancel, detach, wait); the run on show is marked. Polled while a run in it is live.
// Nothing is shown for a run with neither parent nor children.
import { Link } from 'react-router';
import { TERMINAL, runsApi, type RunTree } from '../api.ts';
import { Panel, StatusBadge } from '../components/ui.tsx';
import { shortId } from '../format.ts';
import { usePolling } from '../hooks.ts';

/** How far up the tree's root is looked for (children nest far less deep in practice). */
const MAX_ANCESTORS = 20;
const POLL_MS = 2_000;

async function familyOf(runId: string, parentRunId: string | null): Promise<RunTree> {
  let root = runId;
  let parent = parentRunId;
  for (let hops = 0; parent !== null && hops < MAX_ANCESTORS; hops++) {
    root = parent;
    parent = (await runsApi.get(parent)).parentRunId;
  }
  return runsApi.tree(root);
}

export function RunFamily({ runId, parentRunId }: { runId: string; parentRunId: string | null }) {
  const polled = usePolling(() => familyOf(runId, parentRunId), POLL_MS, runId);
  const tree = polled.data;
  if (tree === undefined || tree.runs.length < 2) return null;
  return (
    <Panel title={`Run tree (${tree.runs.length}${tree.truncated ? '+' : ''})`} id="run-tree">
      <ul className="run-tree" data-testid="run-tree">
        {tree.runs.map((node) => (
          <li
            key={node.id}
            data-testid="tree-node"
            data-run-id={node.id}
            data-depth={node.depth}
            className={node.id === runId ? 'current' : undefined}
            style={{ paddingLeft: `${node.depth * 1.5}rem` }}
          >
            {node.depth > 0 ? <span aria-hidden="true">└ </span> : null}
            {node.id === runId ? (
              <span className="mono" aria-current="page">
                {shortId(node.id)}
              </span>
            ) : (
              <Link to={`/runs/${node.id}`} className="mono">
                {shortId(node.id)}
              </Link>
            )}{' '}
            <StatusBadge status={node.status} />{' '}
            <span>
              {node.agent}
              <span className="muted">@{node.agentVersion}</span>
            </span>
            {node.waitingReason !== null && !TERMINAL.has(node.status) ? (
              <span className="muted small"> · {node.waitingReason}</span>
            ) : null}
            {node.onParentEnd !== null ? (
              <span
                className="muted small"
                data-testid="on-parent-end"
                title="What this run does when its parent ends"
              >
                {' '}
                · on parent end: {node.onParentEnd}
              </span>
            ) : null}
          </li>
        ))}
      </ul>
    </Panel>
  );
}
