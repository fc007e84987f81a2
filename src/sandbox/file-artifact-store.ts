// The directory implementation of the artifact store: blobs at <dir>/<sha[0:2]>/<sha[2:]>,
// references under
// <dir>/refs. For one node (or a shared filesystem); the SQLite and Postgres stores serve a cluster.
// Every write is a temp file then a rename, so a crash never leaves a blob whose bytes do not match
// its name. The directory is 0700 and every file 0600: workspace snapshots are only Keel's to read.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertRefName,
  assertSha256,
  sha256Hex,
  verified,
  type ArtifactStore,
} from '../store/artifact-store.ts';

export class FileArtifactStore implements ArtifactStore {
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private pathOf(sha256: string): string {
    assertSha256(sha256);
    return join(this.dir, sha256.slice(0, 2), sha256.slice(2));
  }

  private refPath(name: string): string {
    assertRefName(name);
    return join(this.dir, 'refs', encodeURIComponent(name));
  }

  private writeAtomically(path: string, bytes: Buffer | string): void {
    const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(temp, bytes, { mode: 0o600 });
    renameSync(temp, path);
  }

  async put(bytes: Buffer): Promise<string> {
    const sha256 = sha256Hex(bytes);
    const path = this.pathOf(sha256);
    if (existsSync(path)) return sha256;
    mkdirSync(join(this.dir, sha256.slice(0, 2)), { recursive: true });
    this.writeAtomically(path, bytes);
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    return verified(sha256, readFileSync(this.pathOf(sha256)));
  }

  async has(sha256: string): Promise<boolean> {
    return existsSync(this.pathOf(sha256));
  }

  async setRef(name: string, sha256: string): Promise<void> {
    if (!(await this.has(sha256)))
      throw new Error(`cannot point ${name} at missing artifact ${sha256}`);
    mkdirSync(join(this.dir, 'refs'), { recursive: true });
    this.writeAtomically(this.refPath(name), sha256);
  }

  async getRef(name: string): Promise<string | undefined> {
    const path = this.refPath(name);
    return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  }
}
