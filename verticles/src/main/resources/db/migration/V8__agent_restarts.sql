-- Running tasks lost in an agent restart (RecoveryVerticle, HeartbeatWriter): when the node's current agent
-- boot was first seen, and how many heartbeats in a row the restarted agent has not reported a running task.
ALTER TABLE nodes ADD COLUMN boot_seen_at timestamptz;
ALTER TABLE tasks ADD COLUMN agent_misses integer NOT NULL DEFAULT 0;
