// A tenant's secret as the store keeps it: a name, a version bumped by each rotation, and its value
// sealed with envelope encryption (src/secrets/). Nothing here ever holds a plaintext value: the
// store sees only ciphertext, the API only names, versions and times. A configuration refers to one
// as `secret:NAME` (SecretRef), e.g. as a header added on the way out (SecretHeaderSchema).
import { z } from 'zod';

/** `secret:NAME` names a secret of the run's tenant wherever a credential is configured. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/** A `secret:NAME` reference in a configuration. */
export const SecretRef = z
  .string()
  .refine((ref) => ref.startsWith('secret:') && SECRET_NAME_PATTERN.test(ref.slice(7)), {
    message: 'must be secret:NAME',
  });

/** A request header whose value comes from a tenant's secret, added on the way out. */
export const SecretHeaderSchema = z.object({
  header: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/)
    .default('authorization'),
  secret: SecretRef,
  format: z.string().includes('{secret}').default('Bearer {secret}'),
});

/** A value sealed under a data key that a key provider wrapped (both base64 text). */
export interface SealedSecret {
  /** Which provider wrapped the data key (e.g. `env`), and under which of its keys. */
  keyProvider: string;
  keyId: string;
  wrappedKey: string;
  /** iv ‖ auth tag ‖ ciphertext of the value, AES-256-GCM under the data key, base64. */
  sealed: string;
}

/** What is listed about a secret: never its value. */
export interface SecretInfo {
  name: string;
  version: number;
  createdAt: number;
  updatedAt: number;
}

export interface SecretRecord extends SecretInfo, SealedSecret {
  tenantId: string;
}
