// The artifact store interface: content-addressed blobs (a blob's name is the sha256 of its bytes,
// so storing the same file twice costs once and a name always means the same bytes) plus named
// references, such as a run's latest workspace manifest. Implementations: a directory (one node),
// SQLite and Postgres (every node sharing the store can rebuild any run's workspace). Blobs are
// never modified; a reference is last-write-wins.
import { createHash } from 'node:crypto';

export interface ArtifactStore {
  /** Stores the bytes (if not already there) and returns their sha256 in hex. */
  put(bytes: Buffer): Promise<string>;
  /** The bytes, verified against their name; throws if absent or corrupt. */
  get(sha256: string): Promise<Buffer>;
  has(sha256: string): Promise<boolean>;
  /** Points a named reference at a stored blob; last write wins. */
  setRef(name: string, sha256: string): Promise<void>;
  getRef(name: string): Promise<string | undefined>;
  close?(): Promise<void>;
}

/** Largest blob any artifact store accepts (a workspace file is capped lower by its profile). */
export const ARTIFACT_MAX_BYTES = 256 * 1024 * 1024;
export const REF_NAME_MAX_CHARS = 512;
const SHA256_PATTERN = /^[0-9a-f]{64}$/;

export const sha256Hex = (bytes: Buffer | string): string =>
  createHash('sha256').update(bytes).digest('hex');

export function assertSha256(sha256: string): void {
  if (!SHA256_PATTERN.test(sha256)) throw new TypeError(`not a sha256: ${JSON.stringify(sha256)}`);
}

export function assertRefName(name: string): void {
  if (name.length === 0 || name.length > REF_NAME_MAX_CHARS)
    throw new TypeError(`reference name must be 1..${REF_NAME_MAX_CHARS} characters`);
}

/**
 * Checks fetched bytes against their name: a store that returns other bytes is corrupt, never
 * trusted.
 */
export function verified(sha256: string, bytes: Buffer): Buffer {
  if (sha256Hex(bytes) !== sha256) throw new Error(`artifact ${sha256} is corrupt`);
  return bytes;
}
