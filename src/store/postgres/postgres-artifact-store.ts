// The artifact store on Postgres: blobs (bytea) and references shared by every node, so a sandbox
// can be rebuilt from a run's latest manifest on any of them. Applies the store's migrations itself
// (under the migration advisory lock). SQL lives in artifact-statements/*.sql.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import {
  ARTIFACT_MAX_BYTES,
  assertRefName,
  assertSha256,
  sha256Hex,
  verified,
  type ArtifactStore,
} from '../artifact-store.ts';
import { toPositional } from '../sql-params.ts';
import { migratePostgres } from './migrate.ts';

const STATEMENTS_DIR = new URL('./artifact-statements/', import.meta.url);
const POOL_MAX_CONNECTIONS = 4;
const NAMES = [
  'artifact-put',
  'artifact-get',
  'artifact-has',
  'artifact-set-ref',
  'artifact-get-ref',
] as const;
type Name = (typeof NAMES)[number];

export class PostgresArtifactStore implements ArtifactStore {
  private readonly pool: pg.Pool;
  private readonly statements: Record<Name, { text: string; names: string[] }>;
  private migrated: Promise<unknown> | undefined;

  constructor(options: { connectionString: string }) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: POOL_MAX_CONNECTIONS,
    });
    this.pool.on('error', () => {}); // an idle connection lost to a restart is replaced, never fatal
    this.statements = Object.fromEntries(
      NAMES.map((name) => [
        name,
        toPositional(readFileSync(new URL(`${name}.sql`, STATEMENTS_DIR), 'utf8'), (n) => `$${n}`),
      ]),
    ) as PostgresArtifactStore['statements'];
  }

  private async query(
    name: Name,
    params: Record<string, unknown>,
  ): Promise<Array<Record<string, unknown>>> {
    this.migrated ??= migratePostgres(this.pool);
    await this.migrated;
    const { text, names } = this.statements[name];
    const values = names.map((key) => {
      if (!(key in params)) throw new Error(`${name}.sql: missing parameter :${key}`);
      return params[key];
    });
    return (await this.pool.query({ name: `keel-${name}`, text, values })).rows;
  }

  async put(bytes: Buffer): Promise<string> {
    if (bytes.length > ARTIFACT_MAX_BYTES)
      throw new RangeError(`artifact of ${bytes.length} bytes exceeds ${ARTIFACT_MAX_BYTES}`);
    const sha256 = sha256Hex(bytes);
    await this.query('artifact-put', {
      sha256,
      size: bytes.length,
      content: bytes,
      created_at: Date.now(),
    });
    return sha256;
  }

  async get(sha256: string): Promise<Buffer> {
    assertSha256(sha256);
    const [row] = await this.query('artifact-get', { sha256 });
    if (row === undefined) throw new Error(`artifact ${sha256} is not stored`);
    return verified(sha256, row.content as Buffer);
  }

  async has(sha256: string): Promise<boolean> {
    assertSha256(sha256);
    return (await this.query('artifact-has', { sha256 })).length > 0;
  }

  async setRef(name: string, sha256: string): Promise<void> {
    assertRefName(name);
    assertSha256(sha256);
    await this.query('artifact-set-ref', { name, sha256, updated_at: Date.now() });
  }

  async getRef(name: string): Promise<string | undefined> {
    assertRefName(name);
    const [row] = await this.query('artifact-get-ref', { name });
    return row?.sha256 as string | undefined;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
