-- Version 7: each task's own MASTER_PORT (torch.distributed's rendezvous port), chosen at bind from the node's
-- master port range (conf/config.yaml, 29500-29999 by default) like an inference task's host port. Two active
-- tasks on one node never hold the same master port; the value stays on the row as history once the task
-- has ended, and a requeued task gives it up.
ALTER TABLE tasks ADD COLUMN master_port integer CHECK (master_port BETWEEN 1 AND 65535);

CREATE UNIQUE INDEX one_active_master_port ON tasks (node_id, master_port)
  WHERE master_port IS NOT NULL AND status IN ('scheduled', 'running', 'stopping', 'preempting');
