-- HeteroFlow schema, version 1. PostgreSQL enforces the invariants; the Java code only avoids wasted work.

CREATE TABLE tenants (
  name          text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  token_sha256  text UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now()
);
-- the tenant of tasks submitted with the admin token; it has no token of its own
INSERT INTO tenants (name) VALUES ('default');

CREATE TABLE share_groups (
  name        text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE share_group_members (
  group_name  text NOT NULL REFERENCES share_groups(name) ON DELETE CASCADE,
  tenant      text NOT NULL REFERENCES tenants(name) ON DELETE CASCADE,
  PRIMARY KEY (group_name, tenant)
);

CREATE TABLE nodes (
  id                 text PRIMARY KEY,
  gpu_vendor         text,
  status             text NOT NULL DEFAULT 'online' CHECK (status IN ('online', 'busy', 'offline')),
  executable         boolean NOT NULL DEFAULT true,
  dedicated_tenant   text REFERENCES tenants(name),
  region             text,
  zone               text,
  rack               text,
  labels             jsonb NOT NULL DEFAULT '{}'::jsonb,  -- set by admins; win over agent_labels
  agent_labels       jsonb NOT NULL DEFAULT '{}'::jsonb,  -- reported by the agent's heartbeats
  topology           text,
  internal_ips       jsonb NOT NULL DEFAULT '[]'::jsonb,
  cpu_cores          integer NOT NULL DEFAULT 0,
  cpu_percent        double precision NOT NULL DEFAULT 0,
  memory_total_gb    double precision NOT NULL DEFAULT 0,
  memory_used_mb     bigint NOT NULL DEFAULT 0,
  gpu_total          integer NOT NULL DEFAULT 0,
  gpu_used           integer NOT NULL DEFAULT 0,
  boot_id            text,
  heartbeat_seq      bigint NOT NULL DEFAULT 0,
  last_heartbeat_at  timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  version            bigint NOT NULL DEFAULT 0,
  CONSTRAINT gpu_used_within_total CHECK (gpu_used >= 0 AND gpu_used <= gpu_total)
);

CREATE TABLE cards (
  node_id              text NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  gpu_index            integer NOT NULL CHECK (gpu_index >= 0),
  uuid                 text,
  model                text,
  memory_total_mb      bigint NOT NULL DEFAULT 0,
  memory_used_mb       bigint NOT NULL DEFAULT 0,
  utilization_percent  integer NOT NULL DEFAULT 0,
  temperature_c        integer NOT NULL DEFAULT 0,
  numa_node            integer,
  PRIMARY KEY (node_id, gpu_index)
);

CREATE TABLE tasks (
  id               uuid PRIMARY KEY,
  tenant           text NOT NULL REFERENCES tenants(name),
  name             text NOT NULL,
  type             text NOT NULL CHECK (type IN ('job', 'training', 'inference')),
  status           text NOT NULL CHECK (status IN ('pending', 'scheduled', 'running', 'succeeded', 'failed',
                                                   'stopping', 'stopped', 'preempting')),
  priority         integer NOT NULL CHECK (priority BETWEEN 0 AND 100),
  preemptible      boolean NOT NULL DEFAULT false,
  gpu_required     integer NOT NULL DEFAULT 0 CHECK (gpu_required >= 0),
  gpu_memory_mb    bigint NOT NULL DEFAULT 0 CHECK (gpu_memory_mb >= 0),
  gpu_type         text,
  group_id         text,
  spec             jsonb NOT NULL,
  node_id          text REFERENCES nodes(id),
  gpu_indices      integer[] NOT NULL DEFAULT '{}',
  reason_code      text,
  reason_message   text,
  exit_code        integer,
  log_tail         text,
  preempt_count    integer NOT NULL DEFAULT 0,
  idempotency_key  text,
  request_sha256   text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  scheduled_at     timestamptz,
  started_at       timestamptz,
  finished_at      timestamptz,
  version          bigint NOT NULL DEFAULT 0,
  CONSTRAINT training_never_preemptible CHECK (NOT (type = 'training' AND preemptible)),
  CONSTRAINT active_task_has_node CHECK (status NOT IN ('scheduled', 'running', 'stopping', 'preempting')
                                         OR node_id IS NOT NULL),
  CONSTRAINT one_task_per_idempotency_key UNIQUE (tenant, idempotency_key)
);
CREATE INDEX tasks_pending_queue ON tasks (priority DESC, created_at, id) WHERE status = 'pending';
CREATE INDEX tasks_by_node_active ON tasks (node_id) WHERE status IN ('scheduled', 'running', 'stopping', 'preempting');
CREATE INDEX tasks_by_tenant_status ON tasks (tenant, status, created_at);

-- Card occupancy. Released rows stay: they are the allocation history.
CREATE TABLE allocations (
  id            bigserial PRIMARY KEY,
  task_id       uuid NOT NULL REFERENCES tasks(id),
  node_id       text NOT NULL REFERENCES nodes(id),
  gpu_index     integer NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('whole', 'shard')),
  memory_mb     bigint NOT NULL DEFAULT 0,
  active        boolean NOT NULL DEFAULT true,
  allocated_at  timestamptz NOT NULL DEFAULT clock_timestamp(),  -- statement time: history intervals are exact
  released_at   timestamptz,
  CONSTRAINT released_iff_inactive CHECK (active = (released_at IS NULL))
);
-- a card has at most one active whole-card allocation
CREATE UNIQUE INDEX one_active_whole_card ON allocations (node_id, gpu_index) WHERE active AND kind = 'whole';
CREATE INDEX allocations_by_task ON allocations (task_id) WHERE active;

-- the scheduler's real-time GPU ledger: +gpu_required at bind, -gpu_required at release
CREATE TABLE gpu_ledger (
  id         bigserial PRIMARY KEY,
  node_id    text NOT NULL REFERENCES nodes(id),
  task_id    uuid NOT NULL REFERENCES tasks(id),
  delta      integer NOT NULL,
  entry      text NOT NULL CHECK (entry IN ('bind', 'release')),
  at         timestamptz NOT NULL DEFAULT now()
);

-- the diagnostics ledger: transitions and scheduling verdicts of every task
CREATE TABLE task_events (
  id           bigserial PRIMARY KEY,
  task_id      uuid NOT NULL REFERENCES tasks(id),
  at           timestamptz NOT NULL DEFAULT now(),
  kind         text NOT NULL,
  from_status  text,
  to_status    text,
  code         text,
  message      text
);
CREATE INDEX task_events_by_task ON task_events (task_id, id);

CREATE TABLE plugin_config (
  name        text PRIMARY KEY,
  enabled     boolean NOT NULL,
  weight      integer NOT NULL CHECK (weight BETWEEN 0 AND 100),
  extra       jsonb NOT NULL DEFAULT '{}'::jsonb,
  version     bigint NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- the leader term (fencing for leader-only writes; elected and renewed with database time)
CREATE TABLE leader (
  id            integer PRIMARY KEY CHECK (id = 1),
  term          bigint NOT NULL DEFAULT 0,
  holder        text,
  lease_until   timestamptz
);
INSERT INTO leader (id) VALUES (1);

ALTER TABLE tasks SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE nodes SET (autovacuum_vacuum_scale_factor = 0.02);
