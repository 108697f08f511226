-- When a task entered preempting: the preempt watchdog (PreemptWatchdogVerticle) forces one whose agent has not
-- confirmed the stop in time through the same CAS arc as the agent's report.
ALTER TABLE tasks ADD COLUMN preempting_since timestamptz;
CREATE INDEX tasks_preempting_since ON tasks (preempting_since) WHERE status = 'preempting';
