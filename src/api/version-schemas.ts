// Wire schemas (zod) of POST /v1/runs/migrate-version: moving a tenant's queued, never-started runs
// from one version of an agent to another that this process serves. Validation and the OpenAPI
// document come from these.
import { z } from 'zod';
import { plainText } from './schemas.ts';

export const MigrateVersionBody = z.strictObject({
  agent: plainText(200).describe('The agent name'),
  from: plainText(64).describe('The version the queued runs are pinned to now'),
  to: plainText(64).describe(
    'The version to pin them to; a process must serve it (409 agent_version_not_served)',
  ),
});

export const MigrateVersionReport = z
  .object({
    agent: z.string(),
    from: z.string(),
    to: z.string(),
    moved: z.number().int().describe('How many queued, never-started runs were moved'),
    movedRunIds: z.array(z.string()).describe('Up to 1,000 of them'),
    started: z
      .number()
      .int()
      .describe(
        'Queued runs of the old version left where they were: they had started (their journal is not empty)',
      ),
    startedRunIds: z.array(z.string()).describe('Up to 100 of them'),
  })
  .meta({ id: 'MigrateVersionReport' });
