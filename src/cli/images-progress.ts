// How `keel images build` shows a build while it runs: on a terminal, one redrawn line with a bar of
// mmdebstrap's phases and the elapsed time; elsewhere (a log, CI), one plain line per phase. It only
// writes to the stream it is given.
import type { BuildProgress } from '../sandbox/images/image-builder.ts';

const BAR_CELLS = 20;
const REDRAW_MS = 1000;

export interface BuildDisplay {
  progress(progress: BuildProgress): void;
  /** Clears the live line (a terminal) before the build's outcome is printed. */
  stop(): void;
}

export function buildDisplay(
  stream: NodeJS.WritableStream,
  image: string,
  tty: boolean,
): BuildDisplay {
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
  if (!tty) {
    let last = '';
    return {
      progress({ stage, stages, label }) {
        if (label === last) return;
        last = label;
        stream.write(`${image}: [${stage}/${stages}] ${label} (${elapsed()})\n`);
      },
      stop() {},
    };
  }
  let current: BuildProgress = { stage: 0, stages: 1, label: 'starting' };
  const draw = () => {
    const filled = Math.round((current.stage / current.stages) * BAR_CELLS);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(BAR_CELLS - filled)}`;
    stream.write(
      `\r\x1b[2K${image} [${bar}] ${current.stage}/${current.stages} ${current.label}  ${elapsed()}`,
    );
  };
  const timer = setInterval(draw, REDRAW_MS);
  timer.unref();
  draw();
  return {
    progress(progress) {
      current = progress;
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write('\r\x1b[2K');
    },
  };
}
