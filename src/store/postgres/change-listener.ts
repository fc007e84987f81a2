// Hears other processes' changes (the write queue's pg_notify, `{ origin, changes }`) on the
// change channel. A lost notification costs latency only: workers also poll, and a reconnect tells
// listeners to look (a claim round, SSE re-reads).
import type { RunChange } from '../store.ts';
import { NotificationListener } from './notification-listener.ts';

export class ChangeListener {
  readonly #listener: NotificationListener;

  constructor(
    connectionString: string,
    origin: string,
    channel: string,
    emit: (changes: readonly RunChange[]) => void,
  ) {
    this.#listener = new NotificationListener(connectionString, [channel], {
      onNotification(_channel, payload) {
        const message = JSON.parse(payload) as { origin: string; changes: RunChange[] };
        if (message.origin !== origin) emit(message.changes);
      },
      onConnected: () => emit([{ runId: '*', signal: 'runnable' }]),
    });
  }

  get connected(): boolean {
    return this.#listener.connected;
  }

  start(): Promise<void> {
    return this.#listener.start();
  }

  close(): Promise<void> {
    return this.#listener.close();
  }
}
