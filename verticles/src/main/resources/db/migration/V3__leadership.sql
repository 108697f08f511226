-- Version 3: who is in the cluster, and which leader term bound each task.

CREATE TABLE control_planes (
  member_id   text PRIMARY KEY,
  host        text NOT NULL,
  http_port   integer NOT NULL,
  started_at  timestamptz NOT NULL DEFAULT now(),
  last_seen   timestamptz NOT NULL DEFAULT now()
);

-- the leader term under which the task was bound (a zombie leader's binds are refused, so a term older than
-- the current one never appears on a bind made after a newer leader was elected)
ALTER TABLE tasks ADD COLUMN bound_term bigint;
