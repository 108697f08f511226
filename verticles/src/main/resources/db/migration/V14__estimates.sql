-- Version 14: when a pending task or group is expected to start (SPEC §13), from the round's reservation plan.
-- NULL with a note when it cannot be known (nothing running ends before the fleet is too small, its quota, …).
ALTER TABLE tasks ADD COLUMN estimated_start_at timestamptz;
ALTER TABLE tasks ADD COLUMN estimate_note text;
ALTER TABLE task_groups ADD COLUMN estimated_start_at timestamptz;
ALTER TABLE task_groups ADD COLUMN estimate_note text;

-- each queue's head, for fair share between queues: the first pending tasks of one queue in queue order
CREATE INDEX tasks_pending_by_queue ON tasks (queue, priority DESC, created_at, id)
  WHERE status = 'pending' AND group_id IS NULL;
