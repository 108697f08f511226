-- Version 12: task groups (SPEC §9, all-or-nothing gang scheduling) and the addresses network domains are read from.

CREATE TABLE task_groups (
  id              uuid PRIMARY KEY,
  tenant          text NOT NULL REFERENCES tenants(name),
  name            text NOT NULL,
  type            text NOT NULL CHECK (type IN ('job', 'training', 'inference')),
  gpu_type        text,
  parallelism     text CHECK (parallelism IN ('tensor', 'data', 'pipeline')),
  priority        integer NOT NULL CHECK (priority BETWEEN 0 AND 100),
  status          text NOT NULL CHECK (status IN ('pending', 'scheduled', 'running', 'stopping', 'succeeded',
                                                  'failed', 'stopped')),
  member_count    integer NOT NULL CHECK (member_count BETWEEN 1 AND 1024),
  max_restarts    integer NOT NULL DEFAULT 0 CHECK (max_restarts BETWEEN 0 AND 10),
  -- how many times the whole group went back to pending; each restart is a new attempt of fresh member tasks
  restart_count   integer NOT NULL DEFAULT 0 CHECK (restart_count BETWEEN 0 AND max_restarts),
  -- the reason of a pending group (GangIncomplete with counts), or of a failed or stopped one
  reason_code     text,
  reason_message  text,
  -- where rank 0 runs and how the ranks reach it, set by the bind of the current attempt
  master_node     text REFERENCES nodes(id),
  master_addr     text,
  master_port     integer CHECK (master_port BETWEEN 1 AND 65535),
  backend         text,
  network_domains integer,
  -- the end a stop or failure is driving the group to while its members stop (stopped or failed/restart)
  ending          text CHECK (ending IN ('stopped', 'failed')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  scheduled_at    timestamptz,
  finished_at     timestamptz,
  version         bigint NOT NULL DEFAULT 0,
  CONSTRAINT placed_group_has_master CHECK (status NOT IN ('scheduled', 'running') OR master_node IS NOT NULL)
);
CREATE INDEX task_groups_pending_queue ON task_groups (priority DESC, created_at, id) WHERE status = 'pending';
CREATE INDEX task_groups_unfinished ON task_groups (id) WHERE status IN ('scheduled', 'running', 'stopping');
CREATE INDEX task_groups_by_tenant ON task_groups (tenant, created_at);

-- tasks.group_id was a free-text label that nothing read; it becomes the group a member belongs to. A text
-- value stored before is kept as the label heteroflow.io/legacy-group-id, so nothing a user wrote is lost.
UPDATE tasks SET spec = jsonb_set(spec, '{labels}', coalesce(spec->'labels', '{}'::jsonb)
                                  || jsonb_build_object('heteroflow.io/legacy-group-id', group_id))
  WHERE group_id IS NOT NULL;
ALTER TABLE tasks DROP COLUMN group_id;
ALTER TABLE tasks ADD COLUMN group_id uuid REFERENCES task_groups(id);
-- the member's rank in its group (0 = master) and the group attempt it belongs to (the group's restart_count then)
ALTER TABLE tasks ADD COLUMN group_rank integer CHECK (group_rank BETWEEN 0 AND 1023);
ALTER TABLE tasks ADD COLUMN group_attempt integer CHECK (group_attempt BETWEEN 0 AND 10);
ALTER TABLE tasks ADD CONSTRAINT member_has_rank CHECK ((group_id IS NULL) = (group_rank IS NULL)
                                                       AND (group_id IS NULL) = (group_attempt IS NULL));
-- what the member's run is told to reach its group (world size, rank, master address and port, backend), set at bind
ALTER TABLE tasks ADD COLUMN distributed jsonb;
CREATE UNIQUE INDEX one_rank_per_group_attempt ON tasks (group_id, group_attempt, group_rank) WHERE group_id IS NOT NULL;

-- the queue of single tasks: a group's members are never taken one by one
DROP INDEX tasks_pending_queue;
CREATE INDEX tasks_pending_queue ON tasks (priority DESC, created_at, id) WHERE status = 'pending' AND group_id IS NULL;

-- the node's public addresses, as its agent reports them (used across network domains)
ALTER TABLE nodes ADD COLUMN public_ips jsonb NOT NULL DEFAULT '[]'::jsonb;
