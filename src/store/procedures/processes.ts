// The serving-process procedures both stores share: announce (insert or refresh, and forget the
// rows of processes gone for a day), retire at a graceful stop, list the recently seen.
import {
  SERVING_PROCESS_FORGET_MS,
  toServingProcess,
  type ServingProcess,
} from '../serving-processes.ts';
import { all, run, type Procedure, type Tx } from './transaction.ts';

export function* announceProcess(
  tx: Tx,
  process: Omit<ServingProcess, 'lastSeenAt'>,
): Procedure<void> {
  yield run('announce-process', {
    worker_id: process.workerId,
    role: process.role,
    host: process.host,
    pid: process.pid,
    served: JSON.stringify(process.served),
    started_at: process.startedAt,
    now: tx.now,
  });
  yield run('forget-processes', { before: tx.now - SERVING_PROCESS_FORGET_MS });
}

export function* retireProcess(workerId: string): Procedure<void> {
  yield run('retire-process', { worker_id: workerId });
}

export function* listServingProcesses(seenSince: number): Procedure<ServingProcess[]> {
  return (yield* all('list-serving-processes', { seen_since: seenSince })).map(toServingProcess);
}
