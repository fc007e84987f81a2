// Identifiers: run ids are UUIDv7 (time-ordered, so listing newest-first is an index scan) with a
// readable prefix.
import { v7 as uuidv7 } from 'uuid';

export const RUN_ID_PATTERN =
  /^run_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function newRunId(): string {
  return `run_${uuidv7()}`;
}
