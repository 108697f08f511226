package io.heteroflow.controlplane.scheduler.framework;

/** The Bind extension point for fractional tasks: one card of the chosen node; null when no card can take it. */
public interface ShardPlacer {
  ShardAssignment place(TaskRequest task, NodeInfo node, TenantBoundary boundary, CycleState state);
}
