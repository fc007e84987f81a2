// Envelope encryption of one secret value: a fresh 256-bit data key per version seals the value
// (AES-256-GCM), and the key provider wraps that data key. Both are bound to the tenant, the name
// and the version (additional authenticated data), so a sealed value copied to another secret or
// tenant does not open. The data key lives only for the duration of one call.
import { randomBytes } from 'node:crypto';
import { KeelError } from '../domain/keel-error.ts';
import type { SealedSecret } from '../domain/secrets.ts';
import { gcmOpen, gcmSeal, type KeyProvider } from './key-provider.ts';

const DATA_KEY_BYTES = 32;

/** What a sealed value is bound to: it opens only as this tenant's secret of this name and version. */
export function secretContext(tenantId: string, name: string, version: number): string {
  return `keel-secret/v1/${tenantId}/${name}/${version}`;
}

export async function sealSecret(
  provider: KeyProvider,
  value: string,
  context: string,
): Promise<SealedSecret> {
  const dataKey = randomBytes(DATA_KEY_BYTES);
  try {
    const wrapped = await provider.wrap(dataKey, context);
    return {
      keyProvider: provider.name,
      keyId: wrapped.keyId,
      wrappedKey: wrapped.wrapped,
      sealed: gcmSeal(dataKey, Buffer.from(value, 'utf8'), context).toString('base64'),
    };
  } finally {
    dataKey.fill(0);
  }
}

export async function openSecret(
  provider: KeyProvider,
  sealed: SealedSecret,
  context: string,
): Promise<string> {
  if (sealed.keyProvider !== provider.name)
    throw new KeelError(
      'secret_unreadable',
      `the secret was sealed by key provider ${sealed.keyProvider}, not ${provider.name}`,
    );
  let dataKey: Buffer | undefined;
  try {
    dataKey = await provider.unwrap({ keyId: sealed.keyId, wrapped: sealed.wrappedKey }, context);
    return gcmOpen(dataKey, Buffer.from(sealed.sealed, 'base64'), context).toString('utf8');
  } catch (error) {
    if (error instanceof KeelError) throw error;
    // The cipher's own message says nothing useful and must not grow one that carries bytes.
    throw new KeelError(
      'secret_unreadable',
      'the secret failed authentication: wrong key or altered',
    );
  } finally {
    dataKey?.fill(0);
  }
}
