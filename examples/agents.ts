// Example agents for the quickstart: `npx keel dev --agents examples/agents.ts` (after `npm run
// build`). They import the package by its name, exactly as your own agents module does: `keel` for
// the SDK, `keel/sandbox` for the built-in sandbox tools (inside this repository Node resolves the
// names through package.json "exports").
import { z } from 'zod';
import { defineAgent, defineLoopAgent, defineModel, defineTool } from 'keel';
import { defineImage, defineSandboxProfile, sandboxTools } from 'keel/sandbox';

export const add = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  input: z.object({ a: z.number(), b: z.number() }),
  effect: 'read',
  run: ({ a, b }) => ({ sum: a + b }),
});

/** Greets, asks a human for approval, waits a little, and answers. */
export const approval = defineAgent({
  name: 'approval',
  version: '1',
  async run(ctx, input: { name: string }) {
    const greeting = await ctx.step('greet', () => `hello ${input.name}`);
    const reply = await ctx.model({
      model: 'mock',
      messages: [{ role: 'user', content: greeting }],
    });
    const approved = await ctx.waitForInput<boolean>('approve', { timeoutMs: 24 * 3600 * 1000 });
    await ctx.sleep(100);
    return { greeting, echoed: reply.text, approved };
  },
});

/** A scripted mock model that asks for the add tool once, then answers. */
export const calculatorModel = defineModel({
  name: 'calculator-mock',
  provider: 'mock',
  options: {
    latencyMs: 20,
    script: [{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' }],
  },
});

export const calculator = defineLoopAgent({
  name: 'calculator',
  version: '1',
  model: 'calculator-mock',
  system: 'You add numbers with the add tool.',
  tools: [add],
  maxSteps: 5,
});

/**
 * Built-in workspace tools in a namespace sandbox (bubblewrap; the Keel node runs as root on
 * Linux).
 */
const shell = sandboxTools({
  profile: defineSandboxProfile({ name: 'example-shell', tier: 'namespace', policy: 'rebuild' }),
});

/**
 * Writes a script into the run's workspace, then runs it there; the workspace outlives the sandbox
 * between calls.
 */
export const scripter = defineAgent({
  name: 'scripter',
  version: '1',
  async run(ctx, input: { script: string }) {
    await ctx.tool(shell.write_file, { path: 'main.sh', content: input.script });
    const ran = await ctx.tool(shell.exec, { argv: ['/bin/sh', 'main.sh'] });
    return { stdout: ran.stdout, exitCode: ran.exitCode, limit: ran.limit };
  },
});

/**
 * Environment images: Debian packages built once (mmdebstrap, as root) into a read-only root that
 * every sandbox of the profiles naming them shares. `keel images build --agents examples/agents.ts`
 * builds them ahead; otherwise the first sandbox that needs one builds it (KEEL_IMAGE_BUILD_WAIT_MS).
 */
export const pythonImage = defineImage({
  name: 'python',
  suite: 'bookworm',
  packages: ['python3', 'python3-pip', 'python3-venv'],
});

export const nodeImage = defineImage({
  name: 'node',
  suite: 'bookworm',
  packages: ['nodejs', 'npm'],
});

const python = sandboxTools({
  profile: defineSandboxProfile({
    name: 'example-python',
    tier: 'namespace',
    policy: 'rebuild',
    image: pythonImage,
  }),
  prefix: 'py_',
});

/** Runs a Python snippet with the Python image's python3 (not the host's). */
export const pythonRunner = defineAgent({
  name: 'python-runner',
  version: '1',
  async run(ctx, input: { code: string }) {
    const ran = await ctx.tool(python.exec, { argv: ['python3', '-c', input.code] });
    return { stdout: ran.stdout, stderr: ran.stderr, exitCode: ran.exitCode };
  },
});
