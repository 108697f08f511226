-- Version 19: liveness apart from state. An agent sends a full heartbeat (its cards, load, addresses, labels)
-- when something in it changed and at least every 15th beat; in between it renews its node's lease with a
-- liveness-only beat (heteroflow.node.beat). The lease lives in its own table so that renewing it never rewrites
-- the node row: the scheduler rereads the nodes whose row changed (by xmin), and 2,500 renewals a second would
-- make that every node every round. A node's last sign of life is the later of nodes.last_heartbeat_at and its
-- lease's renewed_at, where the lease is of the holder's boot (a lease of another boot counts for nothing).
-- via / heartbeat_via: the control plane (control_planes.member_id) the beat or the heartbeat came through, so
-- the offline sweep gives the agents of a control plane that died time to reconnect to another one.
ALTER TABLE nodes ADD COLUMN heartbeat_via text;
CREATE TABLE node_leases (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  boot_id text NOT NULL,
  seq bigint NOT NULL,
  renewed_at timestamptz NOT NULL,
  via text
) WITH (fillfactor = 50);
