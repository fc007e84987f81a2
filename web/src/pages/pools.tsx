// Pools: what is queued where and for how long. The run queue per agent (depth, oldest age) and
// completions over time come from the store; depth over time is sampled by this page while it is
// open (the store keeps no history of depths). In-process pools (model gateway, tool pools) show
// when the scheduling plane reports them.
import { useEffect, useState } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { dashboardApi, type PoolsOverview } from '../api.ts';
import { LiveDot, Notice, PageHeader, Panel, Stat } from '../components/ui.tsx';
import { formatCount, formatDuration, sentence } from '../format.ts';
import { usePolling } from '../hooks.ts';

const REFRESH_MS = 3_000;
/** Samples of the depth chart kept in memory (about an hour at the refresh interval). */
const DEPTH_SAMPLES_MAX = 1_200;
const WINDOWS = [15, 60, 360, 1440] as const;
const COLORS = {
  succeeded: '#16a34a',
  failed: '#dc2626',
  cancelled: '#94a3b8',
  queued: '#2563eb',
  running: '#0891b2',
  waiting: '#d97706',
};

interface DepthSample {
  at: number;
  queued: number;
  running: number;
  waiting: number;
  oldestQueuedS: number;
}

const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString('en-US', { hour12: false, hour: '2-digit', minute: '2-digit' });
const clockSeconds = (ms: number) => new Date(ms).toLocaleTimeString('en-US', { hour12: false });

export function PoolsPage() {
  const [minutes, setMinutes] = useState<number>(60);
  const { data, error } = usePolling(
    () => dashboardApi.pools(minutes),
    REFRESH_MS,
    `pools-${minutes}`,
  );
  const [samples, setSamples] = useState<DepthSample[]>([]);

  useEffect(() => {
    if (data === undefined) return;
    const sum = (k: 'queued' | 'running' | 'waiting') =>
      data.runQueues.reduce((n, q) => n + q[k], 0);
    const oldest = Math.max(0, ...data.runQueues.map((q) => q.oldestQueuedAgeMs ?? 0));
    const at = Date.parse(data.at);
    setSamples((list) =>
      list.at(-1)?.at === at
        ? list
        : [
            ...list.slice(-(DEPTH_SAMPLES_MAX - 1)),
            {
              at,
              queued: sum('queued'),
              running: sum('running'),
              waiting: sum('waiting'),
              oldestQueuedS: oldest / 1000,
            },
          ],
    );
  }, [data]);

  return (
    <>
      <PageHeader
        title="Pools"
        subtitle="Queue depth, oldest waiting work and throughput."
        actions={<LiveDot state="polling" />}
      />
      {error !== undefined ? (
        <Notice tone="error" title="Could not load pools">
          {error.message}
        </Notice>
      ) : null}
      {data === undefined ? (
        <p className="empty">Loading…</p>
      ) : (
        <PoolsBody data={data} samples={samples} minutes={minutes} setMinutes={setMinutes} />
      )}
    </>
  );
}

function PoolsBody({
  data,
  samples,
  minutes,
  setMinutes,
}: {
  data: PoolsOverview;
  samples: DepthSample[];
  minutes: number;
  setMinutes: (m: number) => void;
}) {
  const total = (k: 'queued' | 'running' | 'waiting') =>
    data.runQueues.reduce((n, q) => n + q[k], 0);
  const oldest = data.runQueues.reduce<number | null>(
    (m, q) => (q.oldestQueuedAgeMs === null ? m : Math.max(m ?? 0, q.oldestQueuedAgeMs)),
    null,
  );
  const buckets = data.throughput.buckets.map((b) => ({ ...b, t: Date.parse(b.start) }));
  const ended = buckets.reduce((n, b) => n + b.succeeded + b.failed + b.cancelled, 0);
  return (
    <>
      <div className="stats" data-testid="pool-stats">
        <Stat
          label="Queued runs"
          value={formatCount(total('queued'))}
          hint="claimable, not yet taken"
        />
        <Stat
          label="Oldest queued"
          value={formatDuration(oldest)}
          hint="age of the longest-waiting claimable run"
        />
        <Stat label="Running" value={formatCount(total('running'))} />
        <Stat
          label="Waiting"
          value={formatCount(total('waiting'))}
          hint="on input, timers or child runs"
        />
        <Stat
          label={`Ended, last ${formatDuration(minutes * 60_000)}`}
          value={formatCount(ended)}
          hint={`${(ended / minutes).toFixed(2)} runs/min`}
        />
      </div>
      <Panel title="Run queue by agent" id="run-queue">
        <div className="table-wrap">
          <table className="table" data-testid="queue-table">
            <thead>
              <tr>
                <th>Agent</th>
                <th className="num">Queued</th>
                <th className="num">Oldest queued</th>
                <th className="num">Running</th>
                <th className="num">Waiting</th>
                <th className="num">Oldest waiting</th>
                <th className="num">Cancelling</th>
              </tr>
            </thead>
            <tbody>
              {data.runQueues.map((q) => (
                <tr key={q.agent}>
                  <td>{q.agent}</td>
                  <td className="num">{formatCount(q.queued)}</td>
                  <td className="num">{formatDuration(q.oldestQueuedAgeMs)}</td>
                  <td className="num">{formatCount(q.running)}</td>
                  <td className="num">{formatCount(q.waiting)}</td>
                  <td className="num">{formatDuration(q.oldestWaitingAgeMs)}</td>
                  <td className="num">{formatCount(q.cancelling)}</td>
                </tr>
              ))}
              {data.runQueues.length === 0 ? (
                <tr>
                  <td colSpan={7} className="empty">
                    Nothing queued, running or waiting.
                  </td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
      </Panel>
      <div className="columns">
        <Panel
          title="Runs ended per interval"
          id="throughput"
          actions={
            // biome-ignore lint/a11y/useSemanticElements: a button group, not a form: <fieldset> would bring form semantics and its border.
            <div className="segmented" role="group" aria-label="Time window">
              {WINDOWS.map((w) => (
                <button
                  key={w}
                  type="button"
                  aria-pressed={minutes === w}
                  className={minutes === w ? 'on' : ''}
                  onClick={() => setMinutes(w)}
                >
                  {w < 60 ? `${w}m` : `${w / 60}h`}
                </button>
              ))}
            </div>
          }
        >
          <div className="chart" data-testid="throughput-chart">
            <ResponsiveContainer width="100%" height={220}>
              <BarChart data={buckets} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
                <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
                <XAxis
                  dataKey="t"
                  type="category"
                  tickFormatter={clock}
                  minTickGap={40}
                  tick={{ fontSize: 11, fill: '#64748b' }}
                />
                <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: '#64748b' }} />
                <Tooltip
                  labelFormatter={(t) =>
                    `${clock(Number(t))} (+${formatDuration(data.throughput.bucketMs)})`
                  }
                />
                <Legend wrapperStyle={{ fontSize: 12 }} />
                <Bar
                  dataKey="succeeded"
                  stackId="a"
                  fill={COLORS.succeeded}
                  isAnimationActive={false}
                />
                <Bar dataKey="failed" stackId="a" fill={COLORS.failed} isAnimationActive={false} />
                <Bar
                  dataKey="cancelled"
                  stackId="a"
                  fill={COLORS.cancelled}
                  isAnimationActive={false}
                />
              </BarChart>
            </ResponsiveContainer>
          </div>
          <p className="muted small">
            Bars are {formatDuration(data.throughput.bucketMs)} wide, from the store.
          </p>
        </Panel>
        <Panel title="Depth over time" id="depth">
          <div className="chart" data-testid="depth-chart">
            <ResponsiveContainer width="100%" height={220}>
              <LineChart data={samples} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
                <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" vertical={false} />
                <XAxis
                  dataKey="at"
                  type="number"
                  domain={['dataMin', 'dataMax']}
                  tickFormatter={clockSeconds}
                  minTickGap={40}
                  tick={{ fontSize: 11, fill: '#64748b' }}
                />
                <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: '#64748b' }} />
                <Tooltip labelFormatter={(t) => clockSeconds(Number(t))} />
                <Legend wrapperStyle={{ fontSize: 12 }} />
                <Line
                  dataKey="queued"
                  stroke={COLORS.queued}
                  dot={false}
                  isAnimationActive={false}
                  strokeWidth={2}
                />
                <Line
                  dataKey="running"
                  stroke={COLORS.running}
                  dot={false}
                  isAnimationActive={false}
                  strokeWidth={2}
                />
                <Line
                  dataKey="waiting"
                  stroke={COLORS.waiting}
                  dot={false}
                  isAnimationActive={false}
                  strokeWidth={2}
                />
              </LineChart>
            </ResponsiveContainer>
          </div>
          <p className="muted small">
            Sampled every {REFRESH_MS / 1000} s since this page opened ({samples.length} sample
            {samples.length === 1 ? '' : 's'}).
          </p>
        </Panel>
      </div>
      <Panel title="In-process pools" id="pools">
        {data.pools.available ? (
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th>Pool</th>
                  <th>Kind</th>
                  <th className="num">Queued</th>
                  <th className="num">Running</th>
                  <th className="num">Concurrency</th>
                  <th className="num">Oldest queued</th>
                  <th>State</th>
                </tr>
              </thead>
              <tbody>
                {data.pools.pools.map((p) => (
                  <tr key={p.name}>
                    <td>{p.name}</td>
                    <td>{p.kind}</td>
                    <td className="num">{p.queued}</td>
                    <td className="num">{p.running}</td>
                    <td className="num">{p.concurrency ?? '—'}</td>
                    <td className="num">{formatDuration(p.oldestQueuedAgeMs)}</td>
                    <td>{p.state ?? 'ok'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <Notice tone="info" title="Not reported">
            {sentence(data.pools.reason)}
          </Notice>
        )}
      </Panel>
    </>
  );
}
