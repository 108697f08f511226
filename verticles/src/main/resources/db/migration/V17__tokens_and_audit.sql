-- Version 17: API hardening (issue 18 §4). Tenant tokens get a table of their own, so a tenant can hold several
-- (rotation) and each can be revoked; only the SHA-256 of a token is stored, with a short non-secret prefix for
-- display. The hashes tenants held before (tenants.token_sha256, V1) move here, so existing tokens keep working.

CREATE TABLE tenant_tokens (
  id            uuid PRIMARY KEY,
  tenant        text NOT NULL REFERENCES tenants(name) ON DELETE CASCADE,
  token_sha256  text NOT NULL UNIQUE CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
  -- the first characters of the token (e.g. 'hft_AbCd'), enough to tell tokens apart; NULL for migrated ones
  prefix        text CHECK (length(prefix) <= 12),
  created_at    timestamptz NOT NULL,
  created_by    text NOT NULL,
  revoked_at    timestamptz,
  revoked_by    text
);
CREATE INDEX tenant_tokens_by_tenant ON tenant_tokens (tenant, created_at);

-- md5() of the hash gives each migrated token a stable id (the migration is repeatable on a restored dump)
INSERT INTO tenant_tokens (id, tenant, token_sha256, prefix, created_at, created_by)
SELECT md5(token_sha256)::uuid, name, token_sha256, NULL, created_at, 'migration V17'
FROM tenants WHERE token_sha256 IS NOT NULL
ON CONFLICT DO NOTHING;

-- the old column is no longer read or written: authentication looks tokens up in tenant_tokens only
ALTER TABLE tenants DROP COLUMN token_sha256;

-- The audit ledger: one row per admin action, written in the transaction of the action where the action is one
-- statement or transaction of its own (tenants and tokens), right after it otherwise (nodes, queues, plugins).
CREATE TABLE audit_events (
  id          bigserial PRIMARY KEY,
  at          timestamptz NOT NULL,
  actor       text NOT NULL,         -- 'admin', or the tenant's name; never a token
  action      text NOT NULL,         -- e.g. 'token.rotate', 'node.drain'
  target      text NOT NULL,         -- e.g. 'tenant/alice', 'node/n1'
  detail      jsonb NOT NULL DEFAULT '{}'::jsonb,
  request_id  text CHECK (length(request_id) <= 128)
);
CREATE INDEX audit_events_by_time ON audit_events (at DESC, id DESC);
