// Content-addressed storage for workspace files and manifests: a blob's name is the sha256 of its bytes, so a file
// stored twice costs once and a name always means the same bytes. The interface is what a rebuild on any node reads;
// FileArtifactStore keeps blobs in a directory (one node, or a shared filesystem). Blobs are never modified.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ArtifactStore {
  /** Stores the bytes (if not already there) and returns their sha256 in hex. */
  put(bytes: Buffer): Promise<string>;
  get(sha256: string): Promise<Buffer>;
  has(sha256: string): Promise<boolean>;
  /** Points a named reference (a run's latest workspace manifest) at a blob; last write wins. */
  setRef(name: string, sha256: string): Promise<void>;
  getRef(name: string): Promise<string | undefined>;
}

export const sha256Hex = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');
const SHA256_PATTERN = /^[0-9a-f]{64}$/;

export class FileArtifactStore implements ArtifactStore {
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private pathOf(sha256: string): string {
    if (!SHA256_PATTERN.test(sha256)) throw new TypeError(`not a sha256: ${sha256}`);
    return join(this.dir, sha256.slice(0, 2), sha256.slice(2));
  }

  async put(bytes: Buffer): Promise<string> {
    const sha256 = sha256Hex(bytes);
    const path = this.pathOf(sha256);
    if (existsSync(path)) return sha256;
    mkdirSync(join(this.dir, sha256.slice(0, 2)), { recursive: true });
    // Write then rename: a crash never leaves a blob whose bytes do not match its name.
    const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(temp, bytes);
    renameSync(temp, path);
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    const bytes = readFileSync(this.pathOf(sha256));
    if (sha256Hex(bytes) !== sha256) throw new Error(`artifact ${sha256} is corrupt`);
    return bytes;
  }

  async has(sha256: string): Promise<boolean> {
    return existsSync(this.pathOf(sha256));
  }

  private refPath(name: string): string {
    return join(this.dir, 'refs', encodeURIComponent(name));
  }

  async setRef(name: string, sha256: string): Promise<void> {
    this.pathOf(sha256);
    mkdirSync(join(this.dir, 'refs'), { recursive: true });
    const temp = `${this.refPath(name)}.${process.pid}.tmp`;
    writeFileSync(temp, sha256);
    renameSync(temp, this.refPath(name));
  }

  async getRef(name: string): Promise<string | undefined> {
    return existsSync(this.refPath(name)) ? readFileSync(this.refPath(name), 'utf8') : undefined;
  }
}
