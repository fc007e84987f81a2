// An MCP client transport over a stdio server that runs in a Keel sandbox: newline-delimited
// JSON-RPC on the sandboxed program's stdin and stdout (the MCP stdio framing, read and written
// with the SDK's own ReadBuffer and serializeMessage). The SDK's StdioClientTransport spawns its
// program itself, which would put the server outside the sandbox manager's cgroup, image and
// egress; this one is handed a program the manager already started. start() opens the environment
// and the program; close() tears both down. The tail of stderr is kept to explain a failed start.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxService } from '../../sandbox/sandbox-manager.ts';

/** Characters of the server's stderr kept to explain a server that dies. */
const STDERR_TAIL_CHARS = 1_000;

export class SandboxStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #open: () => Promise<SandboxService>;
  readonly #buffer = new ReadBuffer();
  #service: SandboxService | undefined;
  #stderr = '';
  #closed = false;

  /** `open` starts the sandboxed server (SandboxManager.openService). */
  constructor(open: () => Promise<SandboxService>) {
    this.#open = open;
  }

  /** The last characters the server wrote to stderr. */
  stderrTail(): string {
    return this.#stderr.trim();
  }

  async start(): Promise<void> {
    if (this.#service !== undefined) throw new Error('SandboxStdioTransport already started');
    const service = await this.#open();
    this.#service = service;
    if (this.#closed) {
      await service.close();
      return;
    }
    const { stdout, stderr, stdin } = service.process;
    stdout.on('data', (chunk: Buffer) => {
      try {
        this.#buffer.append(chunk);
      } catch (error) {
        // A line beyond the SDK's buffer limit: the stream cannot be resynchronised.
        this.onerror?.(error as Error);
        void this.close();
        return;
      }
      this.#drain();
    });
    stdout.on('error', (error) => this.onerror?.(error));
    stdin.on('error', (error) => this.onerror?.(error));
    stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    void service.process.exited.then(() => void this.close());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#service?.process.stdin;
    if (stdin === undefined || this.#closed) throw new Error('the MCP server is not running');
    await new Promise<void>((resolve, reject) => {
      const ok = stdin.write(serializeMessage(message), (error) =>
        error ? reject(error) : undefined,
      );
      if (ok) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer.clear();
    await this.#service?.close();
    this.onclose?.();
  }

  #drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }
}
