// Keel's configuration: the one module that reads environment variables. Defaults live in one typed object,
// validated with zod at start; a bad value fails loudly with the variable's name and a fix-it hint.
import { z } from 'zod';
import { KeelError } from '../errors/keel-error.ts';

/** A whole number from an environment string; blank or non-decimal text is refused rather than read as 0. */
const integer = (min: number, max: number) =>
  z.union([z.number(), z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number)]).pipe(z.number().int().min(min).max(max));

const ConfigSchema = z.object({
  apiKey: z.string().min(8, 'KEEL_API_KEY must be at least 8 characters').optional(),
  adminKey: z.string().min(16, 'KEEL_ADMIN_KEY must be at least 16 characters').optional(),
  dataDir: z.string().min(1).default('.keel'),
  host: z.string().min(1).default('127.0.0.1'),
  port: integer(0, 65535).default(7070),
  durability: z.enum(['fsync', 'written', 'memory']).default('fsync'),
  leaseTtlMs: integer(500, 3_600_000).default(15_000),
  maxActiveRuns: integer(1, 1_000_000).default(2_000),
  payloadMaxBytes: integer(1024, 64 * 1024 * 1024).default(1024 * 1024),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  databaseUrl: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string').optional(),
  url: z.string().url().default('http://127.0.0.1:7070'),
  // --- telemetry (issue 9) ---
  /** Prompts, tool arguments and results in spans; redacted unless turned on. */
  telemetryIncludeContent: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /** A second listener serving only GET /metrics, without auth (bind it where only Prometheus can reach it). */
  metricsPort: integer(0, 65535).optional(),
  metricsHost: z.string().min(1).default('127.0.0.1'),
  /** Standard OpenTelemetry variables Keel reads to decide whether to trace (the SDK reads the rest itself). */
  otelTracesExporter: z.enum(['none', 'otlp', 'console']).optional(),
  otelSdkDisabled: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  otelServiceName: z.string().min(1).default('keel'),
  otelExporterOtlpEndpoint: z.string().url().optional(),
  otelExporterOtlpTracesEndpoint: z.string().url().optional(),
  // --- end telemetry ---
});
export type KeelConfig = z.infer<typeof ConfigSchema>;

/** Environment variable → config key. The only place Keel reads its environment. */
export const ENV_VARS = {
  KEEL_API_KEY: 'apiKey',
  KEEL_ADMIN_KEY: 'adminKey',
  KEEL_DATA_DIR: 'dataDir',
  KEEL_HOST: 'host',
  KEEL_PORT: 'port',
  KEEL_DURABILITY: 'durability',
  KEEL_LEASE_TTL_MS: 'leaseTtlMs',
  KEEL_MAX_ACTIVE_RUNS: 'maxActiveRuns',
  KEEL_PAYLOAD_MAX_BYTES: 'payloadMaxBytes',
  KEEL_LOG_LEVEL: 'logLevel',
  KEEL_DATABASE_URL: 'databaseUrl',
  KEEL_URL: 'url',
  // --- telemetry (issue 9) ---
  KEEL_TELEMETRY_INCLUDE_CONTENT: 'telemetryIncludeContent',
  KEEL_METRICS_PORT: 'metricsPort',
  KEEL_METRICS_HOST: 'metricsHost',
  OTEL_TRACES_EXPORTER: 'otelTracesExporter',
  OTEL_SDK_DISABLED: 'otelSdkDisabled',
  OTEL_SERVICE_NAME: 'otelServiceName',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'otelExporterOtlpEndpoint',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'otelExporterOtlpTracesEndpoint',
  // --- end telemetry ---
} as const satisfies Record<string, keyof KeelConfig>;

export interface LoadedConfig {
  config: KeelConfig;
  /** KEEL_* variables Keel does not know: probably typos; reported, not fatal, since agent code may use its own. */
  unknownVariables: string[];
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Record<keyof KeelConfig, unknown>> = {}): LoadedConfig {
  const raw: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(ENV_VARS)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) raw[key] = value;
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const byKey = Object.fromEntries(Object.entries(ENV_VARS).map(([name, key]) => [key, name]));
    const problems = parsed.error.issues.map((i) => `${byKey[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`);
    throw new KeelError('config_invalid', `invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const unknownVariables = Object.keys(env).filter((name) => name.startsWith('KEEL_') && !(name in ENV_VARS));
  return { config: parsed.data, unknownVariables };
}
