-- A preemptor's nomination (SPEC §6): the node where its victims are stopping, and until when that node is held
-- for it against tasks of lower or equal priority. Cleared by its bind; read by the scheduler only while it is pending.
ALTER TABLE tasks ADD COLUMN nominated_node text;
ALTER TABLE tasks ADD COLUMN nominated_until timestamptz;
-- the victims it waits for: the nomination holds its node while any of them is still preempting
ALTER TABLE tasks ADD COLUMN nominated_victims uuid[];
CREATE INDEX tasks_nominated ON tasks (nominated_node) WHERE status = 'pending' AND nominated_node IS NOT NULL;
-- preemption planning looks for candidate victims by priority among active preemptible tasks
CREATE INDEX tasks_preemptible_active ON tasks (priority) WHERE preemptible AND status IN ('scheduled', 'running');
