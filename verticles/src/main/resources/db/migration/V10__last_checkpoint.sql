-- When a task with a checkpoint handshake last wrote its checkpoint file, as its agent reported it.
ALTER TABLE tasks ADD COLUMN last_checkpoint_at timestamptz;
