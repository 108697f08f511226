-- Version 13: hierarchical queues with quotas in GPU-equivalents (SPEC §13, §14).

CREATE TABLE queues (
  name                text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  parent              text REFERENCES queues(name) ON DELETE RESTRICT,
  weight              integer NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 1000),
  guaranteed          double precision NOT NULL DEFAULT 0 CHECK (guaranteed >= 0),
  max_gpu_eq          double precision CHECK (max_gpu_eq IS NULL OR max_gpu_eq >= guaranteed),
  max_cards_per_task  integer CHECK (max_cards_per_task IS NULL OR max_cards_per_task >= 1),
  max_running         integer CHECK (max_running IS NULL OR max_running >= 1),
  -- the tenants that may submit to the queue; a tenant no queue lists submits to root
  tenants             text[] NOT NULL DEFAULT '{}',
  created_at          timestamptz NOT NULL DEFAULT now(),
  version             bigint NOT NULL DEFAULT 0,
  CONSTRAINT only_root_has_no_parent CHECK ((name = 'root') = (parent IS NULL))
);
INSERT INTO queues (name) VALUES ('root');

-- card model → GPU-equivalent factor; a model not listed counts 1.0
CREATE TABLE gpu_equivalents (
  model   text PRIMARY KEY CHECK (length(model) BETWEEN 1 AND 128),
  factor  double precision NOT NULL CHECK (factor > 0 AND factor <= 100)
);

ALTER TABLE tasks ADD COLUMN queue text NOT NULL DEFAULT 'root' REFERENCES queues(name);
ALTER TABLE task_groups ADD COLUMN queue text NOT NULL DEFAULT 'root' REFERENCES queues(name);
CREATE INDEX tasks_active_by_queue ON tasks (queue) WHERE status IN ('scheduled', 'running', 'stopping', 'preempting');
CREATE INDEX tasks_by_queue ON tasks (queue);
