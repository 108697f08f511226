-- Version 16: inference services (SPEC §2 inference rebuild, §9 schedule windows).
-- An inference group declared with `replicas` is a service, not a gang: its replicas are independent single tasks
-- (scheduled one by one like any task), each in a numbered slot. The group row holds the desired count; the
-- rebuild beat keeps one live replica in every slot below it.

ALTER TABLE task_groups ADD COLUMN kind text NOT NULL DEFAULT 'gang' CHECK (kind IN ('gang', 'service'));
-- a service has no gang of members: member_count is the replica count it was declared with (0 allowed)
ALTER TABLE task_groups DROP CONSTRAINT task_groups_member_count_check;
ALTER TABLE task_groups ADD CONSTRAINT task_groups_member_count_check CHECK (member_count BETWEEN 0 AND 1024);
-- a running service has no master: only a placed gang does
ALTER TABLE task_groups DROP CONSTRAINT placed_group_has_master;
ALTER TABLE task_groups ADD CONSTRAINT placed_group_has_master
  CHECK (kind = 'service' OR status NOT IN ('scheduled', 'running') OR master_node IS NOT NULL);
-- services are 'running' until stopped for good ('stopped'); they never pass through the gang states
ALTER TABLE task_groups ADD CONSTRAINT service_states CHECK (kind = 'gang' OR status IN ('running', 'stopped'));
ALTER TABLE task_groups ADD COLUMN desired_replicas integer CHECK (desired_replicas BETWEEN 0 AND 1024);
ALTER TABLE task_groups ADD CONSTRAINT service_has_desired CHECK ((kind = 'service') = (desired_replicas IS NOT NULL));
-- the replica's task spec (a TaskSpec's JSON with its columns), autoscale {min, max, target} and windows as declared
ALTER TABLE task_groups ADD COLUMN replica_spec jsonb;
ALTER TABLE task_groups ADD COLUMN autoscale jsonb;
ALTER TABLE task_groups ADD COLUMN windows jsonb;
-- while true the window job owns the replica count (the action is in force); replicas_before_window is what it
-- restores when the window opens again (pause and scale)
ALTER TABLE task_groups ADD COLUMN window_owns boolean NOT NULL DEFAULT false;
ALTER TABLE task_groups ADD COLUMN replicas_before_window integer CHECK (replicas_before_window BETWEEN 0 AND 1024);
ALTER TABLE task_groups ADD CONSTRAINT window_remembers_count
  CHECK (NOT window_owns OR replicas_before_window IS NOT NULL);
-- when desired_replicas last changed (the autoscaler judges only utilisation sampled after it)
ALTER TABLE task_groups ADD COLUMN replicas_changed_at timestamptz;
-- replicas re-created after one failed, was lost or went missing
ALTER TABLE task_groups ADD COLUMN rebuilds bigint NOT NULL DEFAULT 0;
CREATE INDEX task_groups_running_services ON task_groups (id) WHERE kind = 'service' AND status = 'running';

-- One row per slot ever used: the generation of its latest replica and how many replicas in a row failed quickly
-- (the back-off: 10 s doubling to 5 min). A rebuild moves generation by CAS in the transaction that inserts the
-- next replica, so two rebuilders can never create two.
CREATE TABLE replica_slots (
  service_id  uuid NOT NULL REFERENCES task_groups(id),
  slot        integer NOT NULL CHECK (slot BETWEEN 0 AND 1023),
  generation  integer NOT NULL CHECK (generation >= 0),
  failures    integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  PRIMARY KEY (service_id, slot)
);

-- A replica is a single task (group_id NULL: it is queued and placed one by one) of a service, in a slot.
ALTER TABLE tasks ADD COLUMN service_id uuid REFERENCES task_groups(id);
ALTER TABLE tasks ADD COLUMN replica_slot integer CHECK (replica_slot BETWEEN 0 AND 1023);
ALTER TABLE tasks ADD COLUMN replica_generation integer CHECK (replica_generation >= 0);
ALTER TABLE tasks ADD CONSTRAINT replica_has_slot CHECK ((service_id IS NULL) = (replica_slot IS NULL)
                                                        AND (service_id IS NULL) = (replica_generation IS NULL)
                                                        AND (service_id IS NULL OR group_id IS NULL));
CREATE UNIQUE INDEX one_replica_per_generation ON tasks (service_id, replica_slot, replica_generation)
  WHERE service_id IS NOT NULL;
-- never two live replicas in one slot: a replica merely slow to start is never duplicated
CREATE UNIQUE INDEX one_live_replica_per_slot ON tasks (service_id, replica_slot)
  WHERE service_id IS NOT NULL AND status IN ('pending', 'scheduled', 'running', 'stopping', 'preempting');

-- Mean GPU utilisation of a service's cards as the autoscaler sampled it (every 10 s, kept 10 minutes), so a new
-- leader decides on the same 60 s a failed one saw.
CREATE TABLE service_utilization (
  service_id   uuid NOT NULL REFERENCES task_groups(id),
  sampled_at   timestamptz NOT NULL,
  mean_percent double precision NOT NULL CHECK (mean_percent BETWEEN 0 AND 100),
  cards        integer NOT NULL CHECK (cards >= 0),
  PRIMARY KEY (service_id, sampled_at)
);

-- What happened to a group and why: rebuilds, scaling (by hand, autoscaler with its inputs, window), window actions.
CREATE TABLE group_events (
  id        bigserial PRIMARY KEY,
  group_id  uuid NOT NULL REFERENCES task_groups(id),
  at        timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind      text NOT NULL,
  message   text NOT NULL,
  details   jsonb
);
CREATE INDEX group_events_by_group ON group_events (group_id, id);

-- An inactive tenant's tokens still read, but nothing new starts for it (its pending tasks wait, submissions are
-- refused, a window does not add its replicas).
ALTER TABLE tenants ADD COLUMN active boolean NOT NULL DEFAULT true;
