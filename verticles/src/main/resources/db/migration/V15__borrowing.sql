-- Version 15: borrowing between queues (SPEC §13, §14).
-- A training task that binds on another queue's idle guarantee names its lender: its GPU-equivalents count
-- against the lender (never against its own queue's max) until it ends. Only the bind sets it, under the lock of
-- the lender's row (QuotaCheck), and every bind sets it anew.
ALTER TABLE tasks ADD COLUMN borrowed_from text REFERENCES queues(name);
CREATE INDEX tasks_active_by_lender ON tasks (borrowed_from)
  WHERE borrowed_from IS NOT NULL AND status IN ('scheduled', 'running', 'stopping', 'preempting');
-- Training is never preempted, so only training may borrow this way, and never a task that may be preempted.
ALTER TABLE tasks ADD CONSTRAINT borrowing_is_training CHECK (borrowed_from IS NULL OR type = 'training');
-- Since when the queue's own use (its subtree's, lent capacity aside) has been below its guarantee; NULL when it
-- is not. Kept by the leader's borrow patrol every 15 s.
ALTER TABLE queues ADD COLUMN idle_since timestamptz;
