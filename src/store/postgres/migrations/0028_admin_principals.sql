-- 0028: platform admins as named principals (issue 20): each has an id (adm_...), a unique name, its key's SHA-256
-- hash (the secret is shown once, never stored), its creation and revocation time. KEEL_ADMIN_KEY stays the root
-- principal (not stored); audit entries of admin requests name the principal.
CREATE TABLE admin_principals (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  key_hash    TEXT NOT NULL UNIQUE,
  created_at  BIGINT NOT NULL,
  revoked_at  BIGINT
);
