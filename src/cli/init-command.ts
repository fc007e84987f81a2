// `keel init [dir]`: scaffolds a project that runs under `keel dev` as it is — a package.json that
// makes it an ES module on Node 24 with keel as a dependency, an example TypeScript agent, a models
// file with a mock model, a README and a .gitignore. It never overwrites: if any of its files
// exists, it writes nothing and says which.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { HELP_FLAG, parseFlags } from './kit/args.ts';
import { EXIT_OK, out, StartupError, UsageError, type CliIo } from './kit/output.ts';

export const INIT_USAGE = `usage: keel init [dir]

  Scaffolds a Keel project in dir (default: the current directory): package.json ("type": "module",
  Node >= 24, keel as a dependency), agents.ts (an example agent), models.json (a mock model), README.md
  and .gitignore. Refuses to overwrite any existing file.

exit codes: 0 written; 2 usage error, or a file already exists (nothing is written)`;

/** The version of this keel package, for the scaffold's dependency range. */
function keelVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version?: string };
  return manifest.version ?? '0.1.0';
}

/** The zod range this keel package depends on: the example agent's schemas must match it. */
function zodRange(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { dependencies?: Record<string, string> };
  return manifest.dependencies?.zod ?? '^4';
}

/** npm's rule for a package name, loosely: lower case, URL-safe; anything else becomes `-`. */
function packageName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name === '' ? 'keel-agents' : name.slice(0, 214);
}

const AGENTS_TS = `// Your agents. Keel loads this module with \`keel dev --agents agents.ts\`: every export made with
// defineAgent() is an agent. Everything that touches the outside world goes through ctx, so a run
// survives crashes and restarts: completed steps return their journaled result on replay.
import { z } from 'zod';
import { defineAgent, defineTool } from 'keel';

export const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up',
  input: z.object({ word: z.string() }),
  effect: 'read', // safe to run again after a crash
  run: ({ word }) => ({ word, length: word.length }),
});

export const hello = defineAgent({
  name: 'hello',
  version: '1', // bump it when you change what the agent does: runs stay on the version they started
  async run(ctx, input: { name: string }) {
    const greeting = await ctx.step('greet', () => \`hello \${input.name}\`);
    const facts = await ctx.tool(lookup, { word: input.name });
    const reply = await ctx.model({
      model: 'assistant',
      messages: [{ role: 'user', content: \`\${greeting}, your name has \${facts.length} letters\` }],
    });
    return { greeting, reply: reply.text };
  },
});
`;

const MODELS_JSON = `${JSON.stringify(
  {
    models: [
      {
        name: 'assistant',
        provider: 'mock',
        options: { latencyMs: 50 },
      },
    ],
  },
  null,
  2,
)}\n`;

function readme(name: string): string {
  return `# ${name}

Agents for [Keel](https://www.npmjs.com/package/keel). \`npm install\`, then \`npm run dev\`: Keel runs the agents
in \`agents.ts\` with the models in \`models.json\` (a mock model; see Keel's models guide for real providers) and
prints its address and an API key. Submit a run: \`npx keel runs submit hello --input '{"name":"Ada"}' --wait\`.

This project must stay an ES module (\`"type": "module"\` in package.json) on Node 24 or later.
`;
}

/** The files of a new project, by path relative to its directory. */
export function scaffold(dir: string): Record<string, string> {
  const name = packageName(dir);
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '>=24' },
    scripts: {
      dev: 'KEEL_MODELS_FILE=models.json keel dev --agents agents.ts --watch',
    },
    dependencies: { keel: `^${keelVersion()}`, zod: zodRange() },
  };
  return {
    'package.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'agents.ts': AGENTS_TS,
    'models.json': MODELS_JSON,
    'README.md': readme(name),
    '.gitignore': 'node_modules/\n.keel/\n',
  };
}

export async function runInitCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(argv, HELP_FLAG);
  if (values.help) {
    io.stdout.write(`${INIT_USAGE}\n`);
    return EXIT_OK;
  }
  if (positionals.length > 1)
    throw new UsageError(`expected at most one directory, got ${positionals.length}`);
  const dir = resolve(positionals[0] ?? '.');
  const files = scaffold(dir);
  const taken = Object.keys(files).filter((file) => existsSync(join(dir, file)));
  if (taken.length > 0)
    throw new StartupError(
      `${relative(process.cwd(), dir) || '.'} already has ${taken.join(', ')}; nothing was written`,
      'run keel init in an empty directory, or move those files away first',
    );
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files))
    writeFileSync(join(dir, file), text, { flag: 'wx' });
  const where = relative(process.cwd(), dir) || '.';
  out(
    io,
    `created a Keel project in ${where}: ${Object.keys(files).join(', ')}\n` +
      `next: ${where === '.' ? '' : `cd ${where} && `}npm install && npm run dev`,
  );
  return EXIT_OK;
}
