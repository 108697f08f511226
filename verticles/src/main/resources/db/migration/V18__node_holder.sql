-- Version 18: a node is held by one live agent process. The holder is the agent boot whose heartbeats are applied:
-- nodes.boot_id (V1), held since nodes.boot_seen_at (V8). While the holder's last heartbeat is younger than the
-- hold window (HeartbeatWriter.HOLD_SECONDS) and it has not released the node, a heartbeat of another boot is
-- refused (node_held) by the heartbeat upsert's own condition, so no read-then-write race can let two agent
-- processes with the same node id take turns. released_at: when the holder let go at a clean shutdown
-- (heteroflow.node.release); a heartbeat of another boot then takes over at once. Cleared when a new boot
-- takes over; a late heartbeat of the released boot never holds the node again.
ALTER TABLE nodes ADD COLUMN released_at timestamptz;
