// Sandbox nodes: each node's isolation, state, slots and memory, as the placement plane last saw
// them — or a clear statement that no node is registered.
import { dashboardApi } from '../api.ts';
import { LiveDot, Notice, PageHeader, Panel } from '../components/ui.tsx';
import { formatAgo, sentence } from '../format.ts';
import { usePolling } from '../hooks.ts';

const REFRESH_MS = 5_000;
const gib = (bytes: number | null) =>
  bytes === null ? '—' : `${(bytes / 2 ** 30).toFixed(1)} GiB`;

export function NodesPage() {
  const { data, error } = usePolling(() => dashboardApi.nodes(), REFRESH_MS, 'nodes');
  return (
    <>
      <PageHeader
        title="Sandbox nodes"
        subtitle="Hosts that run sandboxed tools, with their load."
        actions={<LiveDot state="polling" />}
      />
      {error !== undefined ? (
        <Notice tone="error" title="Could not load nodes">
          {error.message}
        </Notice>
      ) : null}
      {data === undefined ? null : !data.available ? (
        <div className="empty-state" data-testid="nodes-empty">
          <h2>No sandbox nodes registered</h2>
          <p>{sentence(data.reason)}</p>
          <p className="muted">
            Nodes appear here once <code>keel node</code> processes register with this Keel.
          </p>
        </div>
      ) : (
        <Panel title={`${data.nodes.length} node${data.nodes.length === 1 ? '' : 's'}`}>
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th>Node</th>
                  <th>Isolation</th>
                  <th>State</th>
                  <th className="num">Slots</th>
                  <th>Load</th>
                  <th className="num">Memory</th>
                  <th>Last seen</th>
                </tr>
              </thead>
              <tbody>
                {data.nodes.map((n) => (
                  <tr key={n.id}>
                    <td className="mono">{n.id}</td>
                    <td>{n.isolation}</td>
                    <td>{n.state}</td>
                    <td className="num">
                      {n.slotsUsed} / {n.slotsTotal}
                    </td>
                    <td>
                      <meter
                        min={0}
                        max={Math.max(n.slotsTotal, 1)}
                        value={n.slotsUsed}
                        aria-label={`${n.id} slots in use`}
                      />
                    </td>
                    <td className="num">
                      {gib(n.memoryUsedBytes)} / {gib(n.memoryTotalBytes)}
                    </td>
                    <td>{formatAgo(n.lastSeenAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Panel>
      )}
    </>
  );
}
