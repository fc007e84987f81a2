// A collapsible JSON viewer: objects and arrays are native <details> (keyboard and screen-reader
// friendly, no state of our own), open to a depth and closed beyond it or when large; strings keep
// their line breaks. It renders values, never HTML: nothing from a step's data can inject markup.
import type { ReactNode } from 'react';

/** Levels opened at first; deeper containers start closed. */
const OPEN_DEPTH = 2;
/** A container with more entries than this starts closed even when shallow. */
const OPEN_ENTRIES_MAX = 50;
/** Entries rendered per container; the rest are counted (the drawer's raw copy has them all). */
const ENTRIES_SHOWN_MAX = 500;

export function JsonView({ value, testId }: { value: unknown; testId?: string }) {
  return (
    <div className="json-view mono" data-testid={testId}>
      <Node value={value} depth={0} />
    </div>
  );
}

function Node({ value, depth, label }: { value: unknown; depth: number; label?: ReactNode }) {
  if (value !== null && typeof value === 'object') {
    const entries: Array<[string, unknown]> = Array.isArray(value)
      ? value.map((v, i) => [String(i), v])
      : Object.entries(value);
    const isArray = Array.isArray(value);
    const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
    if (entries.length === 0)
      return (
        <div className="json-row">
          {label}
          <span className="json-punct">
            {open}
            {close}
          </span>
        </div>
      );
    const shown = entries.slice(0, ENTRIES_SHOWN_MAX);
    return (
      <details
        className="json-node"
        open={depth < OPEN_DEPTH && entries.length <= OPEN_ENTRIES_MAX}
      >
        <summary className="json-row">
          {label}
          <span className="json-punct">{open}</span>
          <span className="json-count">
            {entries.length} {isArray ? 'item' : 'key'}
            {entries.length === 1 ? '' : 's'}
          </span>
        </summary>
        <div className="json-children">
          {shown.map(([k, v]) => (
            <Node
              key={k}
              value={v}
              depth={depth + 1}
              label={
                <span className={isArray ? 'json-index' : 'json-key'}>
                  {isArray ? k : JSON.stringify(k)}:{' '}
                </span>
              }
            />
          ))}
          {entries.length > shown.length ? (
            <div className="json-row json-count">… {entries.length - shown.length} more</div>
          ) : null}
        </div>
        <span className="json-punct">{close}</span>
      </details>
    );
  }
  return (
    <div className="json-row">
      {label}
      <Scalar value={value} />
    </div>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === 'string')
    return <span className="json-string">{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span className="json-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span className="json-boolean">{String(value)}</span>;
  if (value === null) return <span className="json-null">null</span>;
  return <span className="json-null">undefined</span>;
}
