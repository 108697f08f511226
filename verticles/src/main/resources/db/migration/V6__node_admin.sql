-- Version 6: node administration. An admin cordons a node (nothing new is bound there; what runs stays) and
-- drains it (cordon, then the tasks on it are stopped or, with wait, left to finish). An admin's dedicated
-- tenant (a name, or none) is stored as an override that the agent's heartbeats never change.
ALTER TABLE nodes
  ADD COLUMN cordoned            boolean NOT NULL DEFAULT false,
  ADD COLUMN drain_requested     boolean NOT NULL DEFAULT false,
  ADD COLUMN dedicated_by_admin  boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT drained_node_is_cordoned CHECK (cordoned OR NOT drain_requested);
