package io.heteroflow.controlplane.scheduler.framework;

/** Places a fractional task on one card of the chosen node; null when no card can take it. */
public interface ShardPlacer {
  ShardAssignment place(TaskRequest task, NodeInfo node, TenantBoundary boundary);
}
