// Webhook URLs a tenant's schedules may call: only origins (scheme://host[:port]) an operator put
// on that tenant's allowlist, so a tenant cannot make Keel call arbitrary internal addresses.
import { KeelError } from '../domain/keel-error.ts';

/**
 * The origin of a webhook URL; `webhook_not_allowed` for anything but http(s) without credentials.
 */
export function webhookOrigin(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new KeelError('webhook_not_allowed', `${JSON.stringify(url)} is not a URL`, {
      cause: error,
    });
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new KeelError('webhook_not_allowed', 'a webhook URL must be http or https');
  if (parsed.username !== '' || parsed.password !== '')
    throw new KeelError('webhook_not_allowed', 'a webhook URL must not carry credentials');
  return parsed.origin;
}

/** Normalises an allowlist entry to an origin, refusing paths, queries and non-http schemes. */
export function allowlistOrigin(entry: string): string {
  const origin = webhookOrigin(entry);
  const parsed = new URL(entry);
  if (
    (parsed.pathname !== '/' && parsed.pathname !== '') ||
    parsed.search !== '' ||
    parsed.hash !== ''
  ) {
    throw new KeelError(
      'validation_failed',
      `allowlist entries are origins (scheme://host[:port]), not ${JSON.stringify(entry)}`,
    );
  }
  return origin;
}

export function assertWebhookAllowed(url: string, allowlist: readonly string[]): void {
  const origin = webhookOrigin(url);
  if (!allowlist.includes(origin)) {
    throw new KeelError(
      'webhook_not_allowed',
      `${origin} is not on this tenant's webhook allowlist (an operator sets it with PUT /v1/admin/tenants/:id/webhook-allowlist)`,
    );
  }
}
