-- 0024: a tenant's secrets (issue 20), stored encrypted with envelope encryption: each version's value is sealed
-- with its own data key (AES-256-GCM), and that data key is wrapped by the key-encryption key of a provider
-- (key_provider, key_id). The plaintext is never stored; rotation replaces the sealed value and bumps version.
CREATE TABLE secrets (
  tenant_id    TEXT NOT NULL,
  name         TEXT NOT NULL,
  version      INTEGER NOT NULL,
  key_provider TEXT NOT NULL,
  key_id       TEXT NOT NULL,
  wrapped_key  TEXT NOT NULL,
  sealed       TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, name)
) STRICT;
