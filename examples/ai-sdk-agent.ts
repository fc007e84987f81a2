// An agent written with the Vercel AI SDK (`generateText` with tools), made durable by
// `keel/ai-sdk`: every model call is a journaled effect through Keel's gateway and every tool call
// a journaled Keel tool, so a crash mid-loop resumes without calling the model or sending the email
// again. Runs on a scripted mock model (no key needed), after `npm run build`:
//   npx keel dev --agents examples/ai-sdk-agent.ts
//   curl -H "authorization: Bearer $KEY" -H 'content-type: application/json' \
//     -d '{"agent":"weather-mailer","input":{"prompt":"Mail the Paris forecast to ada@example.com"}}' \
//     localhost:7070/v1/runs
// Point the model `assistant` at a real provider with a models file (KEEL_MODELS_FILE) instead of
// exporting the mock below. Set EXAMPLE_OUTBOX to a file to see each email sent as one line.
import { appendFileSync } from 'node:fs';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { defineAgent, defineModel } from 'keel';
import { durableTools, keelAiSdk } from 'keel/ai-sdk';

/** The AI SDK's own tools, unchanged; `durableTools` only says what a retry after a crash may do. */
export const tools = durableTools(
  {
    get_weather: tool({
      description: 'The current weather of a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, sky: 'sunny', celsius: 21 }),
    }),
    send_email: tool({
      description: 'Sends an email',
      inputSchema: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
      // toolCallId is Keel's execution id here: stable across retries, a fine idempotency key.
      execute: async ({ to, subject }, { toolCallId }) => {
        const outbox = process.env.EXAMPLE_OUTBOX;
        if (outbox !== undefined)
          appendFileSync(
            outbox,
            `${JSON.stringify({ tool: 'send_email', to, subject, id: toolCallId })}\n`,
          );
        return { sent: true, messageId: toolCallId };
      },
    }),
  },
  { tools: { get_weather: { effect: 'read' }, send_email: { effect: 'side-effect' } } },
);

const SYSTEM = 'You look up the weather with get_weather, email it with send_email, then confirm.';

/** Weather lookup, email, confirmation: three model calls and two tool calls. */
export const weatherMailer = defineAgent({
  name: 'weather-mailer',
  version: '1',
  input: z.object({ prompt: z.string() }),
  async run(ctx, input) {
    const keel = keelAiSdk(ctx);
    const result = await generateText({
      model: keel.model('assistant'),
      system: SYSTEM,
      prompt: input.prompt,
      tools: tools.bind(ctx),
      stopWhen: stepCountIs(5),
    });
    return { text: result.text, steps: result.steps.length };
  },
});

/** The same loop with `streamText`: parts arrive once each journaled model call completes. */
export const weatherMailerStreaming = defineAgent({
  name: 'weather-mailer-streaming',
  version: '1',
  input: z.object({ prompt: z.string() }),
  async run(ctx, input) {
    const keel = keelAiSdk(ctx);
    const result = streamText({
      model: keel.model('assistant'),
      system: SYSTEM,
      prompt: input.prompt,
      tools: tools.bind(ctx),
      stopWhen: stepCountIs(5),
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    return { text, steps: (await result.steps).length };
  },
});

/** A scripted stand-in for a real model: asks for the weather, then the email, then answers. */
export const assistant = defineModel({
  name: 'assistant',
  provider: 'mock',
  options: {
    script: [
      { toolCalls: [{ name: 'get_weather', args: { city: 'Paris' } }] },
      {
        toolCalls: [
          {
            name: 'send_email',
            args: { to: 'ada@example.com', subject: 'Paris', body: 'Sunny, 21 °C.' },
          },
        ],
      },
      { text: 'Sent: Paris is sunny, 21 °C.' },
    ],
  },
});
