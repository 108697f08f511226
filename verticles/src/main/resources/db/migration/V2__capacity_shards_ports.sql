-- Version 2: CPU / memory accounting, fractional shards, inference host ports, dedication without a
-- foreign key (a fleet may name a tenant before it exists; such a node is simply nobody else's).

ALTER TABLE nodes DROP CONSTRAINT nodes_dedicated_tenant_fkey;

ALTER TABLE nodes
  ADD COLUMN cpu_allocated        double precision NOT NULL DEFAULT 0,
  ADD COLUMN memory_allocated_mb  bigint NOT NULL DEFAULT 0,
  ADD CONSTRAINT cpu_allocated_within_cores CHECK (cpu_allocated >= -0.000001 AND cpu_allocated <= cpu_cores + 0.000001),
  ADD CONSTRAINT memory_allocated_within_total CHECK (memory_allocated_mb >= 0
                                                      AND memory_allocated_mb <= memory_total_gb * 1024);

ALTER TABLE tasks
  ADD COLUMN cpu_cores   double precision NOT NULL DEFAULT 0 CHECK (cpu_cores >= 0),
  ADD COLUMN memory_mb   bigint NOT NULL DEFAULT 0 CHECK (memory_mb >= 0),
  ADD COLUMN host_port   integer,
  ADD COLUMN shard       jsonb;

-- one active task per host port per node
CREATE UNIQUE INDEX one_active_host_port ON tasks (node_id, host_port)
  WHERE host_port IS NOT NULL AND status IN ('scheduled', 'running', 'stopping', 'preempting');

CREATE INDEX allocations_active_by_card ON allocations (node_id, gpu_index) WHERE active;
