// The directory implementation of the artifact store: blobs at <dir>/<sha[0:2]>/<sha[2:]>,
// references under <dir>/refs. For one node (or a shared filesystem); the SQLite and Postgres
// stores serve a cluster. Every write is a temp file then a rename, so a crash never leaves a blob
// whose bytes do not match its name; all file work is asynchronous, so storing a workspace never
// blocks the main thread. The directory is 0700 and every file 0600: workspace snapshots are
// only Keel's to read.
import { mkdirSync } from 'node:fs';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  assertRefName,
  assertSha256,
  sha256Hex,
  verified,
  type ArtifactStore,
} from '../store/artifact-store.ts';

let tempSeq = 0;

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

  private async writeAtomically(path: string, bytes: Buffer | string): Promise<void> {
    const temp = `${path}.${process.pid}.${Date.now()}.${++tempSeq}.tmp`;
    await writeFile(temp, bytes, { mode: 0o600 });
    await rename(temp, path);
  }

  async put(bytes: Buffer): Promise<string> {
    const sha256 = sha256Hex(bytes);
    const path = this.pathOf(sha256);
    if (await exists(path)) return sha256;
    await mkdir(join(this.dir, sha256.slice(0, 2)), { recursive: true });
    await this.writeAtomically(path, bytes);
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    return verified(sha256, await readFile(this.pathOf(sha256)));
  }

  async has(sha256: string): Promise<boolean> {
    return exists(this.pathOf(sha256));
  }

  async setRef(name: string, sha256: string): Promise<void> {
    if (!(await this.has(sha256)))
      throw new Error(`cannot point ${name} at missing artifact ${sha256}`);
    await mkdir(join(this.dir, 'refs'), { recursive: true });
    await this.writeAtomically(this.refPath(name), sha256);
  }

  async getRef(name: string): Promise<string | undefined> {
    try {
      return await readFile(this.refPath(name), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
