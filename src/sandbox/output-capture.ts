// Bounded capture of a child's stdout and stderr: keeps at most `maxBytes` in total and reports
// when it had to stop, so a program printing without end (`yes`) costs Keel a fixed amount of
// memory, never more.
import type { Readable } from 'node:stream';

export class OutputCapture {
  private readonly chunks: { stdout: Buffer[]; stderr: Buffer[] } = { stdout: [], stderr: [] };
  private kept = 0;
  truncated = false;
  private readonly maxBytes: number;
  private readonly onOverflow: () => void;

  constructor(maxBytes: number, onOverflow: () => void) {
    this.maxBytes = maxBytes;
    this.onOverflow = onOverflow;
  }

  attach(stream: Readable, which: 'stdout' | 'stderr'): void {
    stream.on('data', (chunk: Buffer) => {
      if (this.truncated) return;
      const room = this.maxBytes - this.kept;
      if (chunk.length > room) {
        if (room > 0) this.chunks[which].push(chunk.subarray(0, room));
        this.kept = this.maxBytes;
        this.truncated = true;
        this.onOverflow();
        return;
      }
      this.chunks[which].push(chunk);
      this.kept += chunk.length;
    });
  }

  text(which: 'stdout' | 'stderr'): string {
    return Buffer.concat(this.chunks[which]).toString('utf8');
  }
}
