// The artifact store on SQLite: blobs and references in the same database file as the runs (its own
// connection, WAL, so it never blocks the engine's writer for long). Applies the store's migrations
// itself, so it can be opened before or after the main store. SQL lives in
// artifact-statements/*.sql.
import { readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import {
  ARTIFACT_MAX_BYTES,
  assertRefName,
  assertSha256,
  sha256Hex,
  verified,
  type ArtifactStore,
} from '../artifact-store.ts';
import { migrate } from './migrate.ts';
import { NamedStatement } from './statements.ts';

const STATEMENTS_DIR = new URL('./artifact-statements/', import.meta.url);
const BUSY_TIMEOUT_MS = 5_000;
const NAMES = [
  'artifact-put',
  'artifact-get',
  'artifact-has',
  'artifact-set-ref',
  'artifact-get-ref',
] as const;

export class SqliteArtifactStore implements ArtifactStore {
  private readonly db: DatabaseSync;
  private readonly sql: Record<(typeof NAMES)[number], NamedStatement>;

  constructor(options: { path: string }) {
    this.db = new DatabaseSync(options.path);
    this.db.exec(
      `PRAGMA journal_mode = WAL; PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}; PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;`,
    );
    migrate(this.db);
    this.sql = Object.fromEntries(
      NAMES.map((name) => [
        name,
        new NamedStatement(
          this.db,
          `${name}.sql`,
          readFileSync(new URL(`${name}.sql`, STATEMENTS_DIR), 'utf8'),
        ),
      ]),
    ) as SqliteArtifactStore['sql'];
  }

  async put(bytes: Buffer): Promise<string> {
    if (bytes.length > ARTIFACT_MAX_BYTES)
      throw new RangeError(`artifact of ${bytes.length} bytes exceeds ${ARTIFACT_MAX_BYTES}`);
    const sha256 = sha256Hex(bytes);
    this.sql['artifact-put'].run({
      sha256,
      size: bytes.length,
      content: bytes,
      created_at: Date.now(),
    });
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    assertSha256(sha256);
    const row = this.sql['artifact-get'].get({ sha256 });
    if (row === undefined) throw new Error(`artifact ${sha256} is not stored`);
    return verified(sha256, Buffer.from(row.content as Uint8Array));
  }

  async has(sha256: string): Promise<boolean> {
    assertSha256(sha256);
    return this.sql['artifact-has'].get({ sha256 }) !== undefined;
  }

  async setRef(name: string, sha256: string): Promise<void> {
    assertRefName(name);
    assertSha256(sha256);
    this.sql['artifact-set-ref'].run({ name, sha256, updated_at: Date.now() });
  }

  async getRef(name: string): Promise<string | undefined> {
    assertRefName(name);
    return this.sql['artifact-get-ref'].get({ name })?.sha256 as string | undefined;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
