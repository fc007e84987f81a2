// Envelope encryption: a value opens only under its own context and key; each seal uses a fresh
// data key (two seals of one value differ); a wrong key-encryption key, another context or an
// altered byte is refused with a typed error that carries no bytes of the value.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { openSecret, sealSecret, secretContext } from './envelope.ts';
import { EnvKeyProvider } from './key-provider.ts';

const VALUE = 'canary-value-4f1d9c';

describe('envelope encryption', () => {
  const provider = new EnvKeyProvider(randomBytes(32).toString('base64'));
  const context = secretContext('ten_a', 'API_TOKEN', 1);

  it('round-trips, and never stores the value or reuses a data key', async () => {
    const a = await sealSecret(provider, VALUE, context);
    const b = await sealSecret(provider, VALUE, context);
    assert.equal(await openSecret(provider, a, context), VALUE);
    assert.notEqual(a.sealed, b.sealed);
    assert.notEqual(a.wrappedKey, b.wrappedKey);
    assert.ok(!JSON.stringify(a).includes(VALUE));
    assert.ok(!Buffer.from(a.sealed, 'base64').toString('latin1').includes(VALUE));
  });

  it('refuses another context, another key, and altered bytes', async () => {
    const sealed = await sealSecret(provider, VALUE, context);
    const refused = async (promise: Promise<unknown>) =>
      assert.rejects(promise, (error: { code?: string; message: string }) => {
        assert.equal(error.code, 'secret_unreadable');
        assert.ok(!error.message.includes(VALUE));
        return true;
      });
    await refused(openSecret(provider, sealed, secretContext('ten_b', 'API_TOKEN', 1)));
    await refused(openSecret(provider, sealed, secretContext('ten_a', 'API_TOKEN', 2)));
    await refused(openSecret(new EnvKeyProvider(randomBytes(32).toString('hex')), sealed, context));
    const bytes = Buffer.from(sealed.sealed, 'base64');
    bytes[bytes.length - 1]! ^= 1;
    await refused(openSecret(provider, { ...sealed, sealed: bytes.toString('base64') }, context));
  });

  it('refuses a key that is not 32 bytes, saying how to make one', () => {
    assert.throws(() => new EnvKeyProvider('short'), /openssl rand -base64 32/);
  });
});
