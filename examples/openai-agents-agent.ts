// Agents written with the OpenAI Agents SDK (`@openai/agents`: an agent with a tool that hands off
// to another agent with a tool), made durable by `keel/openai-agents`: every model call is a
// journaled effect through Keel's gateway and every tool call a journaled Keel tool, so a crash
// mid-loop resumes without calling the model or sending the email again — handoffs included. Runs
// on a scripted mock model (no key needed), after `npm run build`:
//   npx keel dev --agents examples/openai-agents-agent.ts
//   curl -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
//     -d '{"agent":"forecast-desk","input":{"prompt":"Mail the Oslo forecast to ada@example.com"}}' \
//     localhost:7070/v1/runs
// Point the model `desk-model` at a real provider with a models file (KEEL_MODELS_FILE) instead of
// exporting the mock below. Set EXAMPLE_OUTBOX to a file to see each email sent as one line.
import { appendFileSync } from 'node:fs';
import { Agent } from '@openai/agents';
import { z } from 'zod';
import { defineAgent, defineModel } from 'keel';
import { durableTool, runAgent } from 'keel/openai-agents';

/** What `tool()` takes, plus the effect class: what a retry after a crash may do. */
const lookupForecast = durableTool({
  name: 'lookup_forecast',
  description: 'The forecast of a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, sky: 'snow', celsius: -3 }),
  effect: 'read',
});

const emailForecast = durableTool({
  name: 'email_forecast',
  description: 'Emails a forecast',
  parameters: z.object({ to: z.string(), text: z.string() }),
  execute: async ({ to, text }) => {
    const outbox = process.env.EXAMPLE_OUTBOX;
    if (outbox !== undefined)
      appendFileSync(outbox, `${JSON.stringify({ tool: 'email_forecast', to, text })}\n`);
    return 'sent';
  },
  effect: 'side-effect',
});

const mailer = new Agent({
  name: 'Mailer',
  instructions: 'You email the forecast you are given with email_forecast, then confirm.',
  tools: [emailForecast],
});

const forecaster = new Agent({
  name: 'Forecaster',
  instructions: 'You look up the forecast with lookup_forecast, then hand off to the Mailer.',
  tools: [lookupForecast],
  handoffs: [mailer],
});

/** Forecaster → (handoff) → Mailer: four model calls, two tool calls and one handoff. */
export const forecastDesk = defineAgent({
  name: 'forecast-desk',
  version: '1',
  input: z.object({ prompt: z.string() }),
  async run(ctx, input) {
    const result = await runAgent(ctx, forecaster, input.prompt, { model: 'desk-model' });
    return { answer: String(result.finalOutput ?? ''), agent: result.lastAgent?.name ?? null };
  },
});

/** A scripted stand-in for a real model: forecast, handoff, email, confirmation. */
export const deskModel = defineModel({
  name: 'desk-model',
  provider: 'mock',
  options: {
    script: [
      { toolCalls: [{ name: 'lookup_forecast', args: { city: 'Oslo' } }] },
      { toolCalls: [{ name: 'transfer_to_Mailer', args: {} }] },
      {
        toolCalls: [
          { name: 'email_forecast', args: { to: 'ada@example.com', text: 'Oslo: snow, -3 °C.' } },
        ],
      },
      { text: 'Emailed the Oslo forecast to ada@example.com.' },
    ],
  },
});
