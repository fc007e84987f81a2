// A tenant's secrets as Keel uses them: create, rotate, list, delete, and reveal a value to the one
// place that injects it (the egress proxy, or a sandbox's environment). Values are sealed before
// they reach the store and opened only on reveal; nothing is cached, so a rotation is in effect for
// the very next reveal on every process, without a restart. Never logs a value, never puts one in
// an error.
import { KeelError } from '../domain/keel-error.ts';
import { SECRET_NAME_PATTERN, type SecretInfo } from '../domain/secrets.ts';
import type { Store } from '../store/store.ts';
import { openSecret, sealSecret, secretContext } from './envelope.ts';
import type { KeyProvider } from './key-provider.ts';

/** Largest secret value, in bytes of UTF-8. */
export const SECRET_VALUE_MAX_BYTES = 64 * 1024;
const REF_PREFIX = 'secret:';

type SecretStore = Pick<
  Store,
  'createSecret' | 'rotateSecret' | 'getSecret' | 'listSecrets' | 'deleteSecret'
>;

/** The name in a `secret:NAME` reference; `secret_reference_invalid` for anything else. */
export function secretRefName(ref: string): string {
  const name = ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : '';
  if (!SECRET_NAME_PATTERN.test(name))
    throw new KeelError(
      'secret_reference_invalid',
      `${JSON.stringify(ref)} is not a secret reference: write secret:NAME (NAME: ${SECRET_NAME_PATTERN.source})`,
    );
  return name;
}

export function isSecretRef(value: string): boolean {
  return value.startsWith(REF_PREFIX);
}

export class SecretVault {
  private readonly store: SecretStore;
  private readonly provider: KeyProvider | undefined;

  constructor(store: SecretStore, provider: KeyProvider | undefined) {
    this.store = store;
    this.provider = provider;
  }

  get configured(): boolean {
    return this.provider !== undefined;
  }

  private keys(): KeyProvider {
    if (this.provider === undefined)
      throw new KeelError(
        'secrets_unconfigured',
        'secrets need a key-encryption key: set KEEL_SECRETS_KEY to 32 random bytes as base64 (openssl rand -base64 32) and restart',
      );
    return this.provider;
  }

  async create(tenantId: string, name: string, value: string): Promise<SecretInfo> {
    const sealed = await sealSecret(this.keys(), value, secretContext(tenantId, name, 1));
    return this.store.createSecret(tenantId, name, sealed);
  }

  /** A new value under a new data key, effective at once everywhere; version + 1. */
  async rotate(tenantId: string, name: string, value: string): Promise<SecretInfo> {
    const current = await this.store.getSecret(tenantId, name);
    if (current === null)
      throw new KeelError('secret_not_found', `the tenant has no secret ${name}`);
    const provider = this.keys();
    const sealed = await sealSecret(
      provider,
      value,
      secretContext(tenantId, name, current.version + 1),
    );
    return this.store.rotateSecret(tenantId, name, current.version, sealed);
  }

  list(tenantId: string): Promise<SecretInfo[]> {
    return this.store.listSecrets(tenantId);
  }

  delete(tenantId: string, name: string): Promise<void> {
    return this.store.deleteSecret(tenantId, name);
  }

  /** The current value of the tenant's secret `ref` (`secret:NAME`), for injection only. */
  async reveal(tenantId: string, ref: string): Promise<string> {
    const name = secretRefName(ref);
    const provider = this.keys();
    const record = await this.store.getSecret(tenantId, name);
    if (record === null)
      throw new KeelError('secret_not_found', `the tenant has no secret ${name}`);
    return openSecret(provider, record, secretContext(tenantId, name, record.version));
  }
}
