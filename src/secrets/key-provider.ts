// The key-encryption side of envelope encryption, behind a small KMS-style interface: a provider
// wraps a secret's data key and unwraps it again, and says which of its keys it used. The built-in
// provider holds one 256-bit key from the environment (KEEL_SECRETS_KEY, read by src/config);
// another (a cloud KMS, Vault transit) plugs in by implementing KeyProvider. Never logs or returns
// a key-encryption key.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { KeelError } from '../domain/keel-error.ts';

export interface WrappedKey {
  keyId: string;
  /** base64 text the provider alone can turn back into the data key. */
  wrapped: string;
}

/** A key-encryption-key provider: what a KMS does for envelope encryption, reduced to two calls. */
export interface KeyProvider {
  /** Stored with each secret (`key_provider`), so a value sealed elsewhere is refused clearly. */
  readonly name: string;
  /** Wraps a data key; `context` (tenant and secret) is bound to it like KMS encryption context. */
  wrap(dataKey: Buffer, context: string): Promise<WrappedKey>;
  unwrap(key: WrappedKey, context: string): Promise<Buffer>;
}

export const KEK_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM of `plain` under `key` with `aad` → iv ‖ tag ‖ ciphertext. */
export function gcmSeal(key: Buffer, plain: Buffer, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The inverse of gcmSeal; throws (authentication failed) on a wrong key, aad or tampered bytes. */
export function gcmOpen(key: Buffer, sealed: Buffer, aad: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/**
 * The built-in provider: one key-encryption key given as base64 (or hex) of 32 random bytes. Its
 * key id is a fingerprint (SHA-256 prefix), so a secret sealed under another key names it.
 */
export class EnvKeyProvider implements KeyProvider {
  readonly name = 'env';
  private readonly kek: Buffer;
  private readonly keyId: string;

  constructor(encoded: string) {
    const text = encoded.trim();
    const kek = /^[0-9a-fA-F]{64}$/.test(text)
      ? Buffer.from(text, 'hex')
      : Buffer.from(text, 'base64');
    if (kek.length !== KEK_BYTES)
      throw new KeelError(
        'secrets_unconfigured',
        `KEEL_SECRETS_KEY must be ${KEK_BYTES} random bytes as base64 or hex (got ${kek.length} bytes); make one with: openssl rand -base64 32`,
      );
    this.kek = kek;
    this.keyId = `sha256:${createHash('sha256').update(kek).digest('hex').slice(0, 16)}`;
  }

  async wrap(dataKey: Buffer, context: string): Promise<WrappedKey> {
    return { keyId: this.keyId, wrapped: gcmSeal(this.kek, dataKey, context).toString('base64') };
  }

  async unwrap(key: WrappedKey, context: string): Promise<Buffer> {
    if (key.keyId !== this.keyId)
      throw new KeelError(
        'secret_unreadable',
        `the secret was sealed under key ${key.keyId}, but KEEL_SECRETS_KEY is ${this.keyId}`,
      );
    return gcmOpen(this.kek, Buffer.from(key.wrapped, 'base64'), context);
  }
}
