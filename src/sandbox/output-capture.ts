// Bounded capture of a child's stdout and stderr: keeps at most `maxBytes` in total and reports
// when it had to stop, so a program printing without end (`yes`) costs Keel a fixed amount of
// memory, never more. What it keeps can also be handed on as it arrives (live output), as text
// decoded per stream so a character split across two reads is never cut.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** Output as it arrives: one stream's next piece of text. */
export type OutputListener = (stream: 'stdout' | 'stderr', text: string) => void;

export class OutputCapture {
  private readonly chunks: { stdout: Buffer[]; stderr: Buffer[] } = { stdout: [], stderr: [] };
  private kept = 0;
  truncated = false;
  private readonly maxBytes: number;
  private readonly onOverflow: () => void;

  private readonly onOutput: OutputListener | undefined;

  constructor(maxBytes: number, onOverflow: () => void, onOutput?: OutputListener) {
    this.maxBytes = maxBytes;
    this.onOverflow = onOverflow;
    this.onOutput = onOutput;
  }

  attach(stream: Readable, which: 'stdout' | 'stderr'): void {
    const decoder = this.onOutput === undefined ? undefined : new StringDecoder('utf8');
    const pass = (chunk: Buffer) => {
      const text = decoder?.write(chunk);
      if (text) this.onOutput!(which, text);
    };
    stream.on('data', (chunk: Buffer) => {
      if (this.truncated) return;
      const room = this.maxBytes - this.kept;
      if (chunk.length > room) {
        if (room > 0) {
          this.chunks[which].push(chunk.subarray(0, room));
          pass(chunk.subarray(0, room));
        }
        this.kept = this.maxBytes;
        this.truncated = true;
        this.onOverflow();
        return;
      }
      this.chunks[which].push(chunk);
      this.kept += chunk.length;
      pass(chunk);
    });
  }

  text(which: 'stdout' | 'stderr'): string {
    return Buffer.concat(this.chunks[which]).toString('utf8');
  }
}
