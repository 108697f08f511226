-- Version 14: when a pending task or group is expected to start (SPEC §13), from the round's reservation plan.
-- NULL with a note when it cannot be known (nothing running ends before the fleet is too small, its quota, …).
ALTER TABLE tasks ADD COLUMN estimated_start_at timestamptz;
ALTER TABLE tasks ADD COLUMN estimate_note text;
ALTER TABLE task_groups ADD COLUMN estimated_start_at timestamptz;
ALTER TABLE task_groups ADD COLUMN estimate_note text;
