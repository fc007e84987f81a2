// The generated reference pages (docs/reference/*.md) match the code: each page is rendered again
// in memory and compared with the file, so a new config key, error code, route or metric without
// `npm run docs` fails here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ENV_VAR_DESCRIPTIONS, ENV_VARS } from '../src/config/config.ts';
import { createMetrics } from '../src/telemetry/metrics.ts';
import { renderReferencePages } from '../scripts/reference-docs.ts';

const root = new URL('../', import.meta.url);
const rootDir = fileURLToPath(root);

test('every generated reference page is fresh (else run npm run docs)', async () => {
  const pages = await renderReferencePages();
  assert.deepEqual([...pages.keys()].toSorted(), [
    'docs/reference/configuration.md',
    'docs/reference/error-codes.md',
    'docs/reference/http-api.md',
    'docs/reference/metrics.md',
  ]);
  for (const [page, text] of pages) {
    let current = '';
    try {
      current = readFileSync(new URL(page, root), 'utf8');
    } catch {
      assert.fail(`${page} is missing: run npm run docs`);
    }
    assert.equal(current, text, `${page} is stale: run npm run docs`);
  }
});

test('every environment variable has a description and every metric a help text', () => {
  for (const name of Object.keys(ENV_VARS)) {
    const description = (ENV_VAR_DESCRIPTIONS as Record<string, string | undefined>)[name];
    assert.ok(
      description !== undefined && description.trim().length > 10,
      `${name} has no description in ENV_VAR_DESCRIPTIONS`,
    );
  }
  assert.deepEqual(
    Object.keys(ENV_VAR_DESCRIPTIONS).toSorted(),
    Object.keys(ENV_VARS).toSorted(),
    'descriptions of variables that do not exist',
  );
  for (const metric of createMetrics().registry.getMetricsAsArray() as unknown as Array<{
    name: string;
    help: string;
  }>) {
    assert.ok(metric.help.trim().length > 10, `${metric.name} has no help text`);
  }
});

test('the reference pages render every config variable, error code, route and metric the code defines', async () => {
  const pages = await renderReferencePages();
  const configuration = pages.get('docs/reference/configuration.md') ?? '';
  for (const name of Object.keys(ENV_VARS))
    assert.match(configuration, new RegExp(`^\\| \`${name}\` \\|`, 'm'));
  const api = pages.get('docs/reference/http-api.md') ?? '';
  for (const route of [
    '`POST` | `/v1/runs`',
    '`GET` | `/v1/schedules/{id}/fires`',
    '`PATCH` | `/v1/admin/tenants/{id}`',
  ])
    assert.ok(api.includes(route), route);
  const metrics = pages.get('docs/reference/metrics.md') ?? '';
  assert.match(
    metrics,
    /^\| `keel_runs_total` \| counter \| `tenant`, `agent`, `status`, `outcome` \|/m,
  );
});

/** README.md and every Markdown file under docs/. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? walk(path) : entry.name.endsWith('.md') ? [path] : [];
    });
  return [join(rootDir, 'README.md'), ...walk(join(rootDir, 'docs'))];
}

/** GitHub's anchors of a Markdown file: its headings as slugs, plus explicit `<a id="…">`. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  const slugs = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
    (m[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
  const ids = [...text.matchAll(/<a id="([^"]+)"/g)].map((m) => m[1] ?? '');
  return new Set([...slugs, ...ids]);
}

test('every relative link in README.md and docs/ points at a file that exists (moved modules included)', () => {
  const broken: string[] = [];
  for (const file of markdownFiles()) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] ?? '';
      if (/^(https?:|mailto:)/.test(target)) continue;
      const [pathPart = '', anchor] = target.split('#');
      const path = pathPart === '' ? file : join(dirname(file), decodeURIComponent(pathPart));
      if (!existsSync(path)) broken.push(`${relative(rootDir, file)} → ${target}`);
      else if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(path).has(anchor))
        broken.push(`${relative(rootDir, file)} → ${target} (no such heading)`);
    }
    // Repository paths named in the text (`src/domain/error-codes.ts`, test/serial/x.test.ts),
    // relative to the root.
    for (const match of text.matchAll(
      /(?<![\w./-])((?:src|test|bench|examples|scripts|web)\/[\w./-]*\w\.(?:ts|tsx|json|sql|md|cjs))\b/g,
    )) {
      if (!existsSync(join(rootDir, match[1] ?? '')))
        broken.push(`${relative(rootDir, file)} → ${match[1]}`);
    }
  }
  assert.deepEqual(broken, [], 'broken links');
});
