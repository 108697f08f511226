package io.heteroflow.controlplane.scheduler.framework;

/**
 * Reserve / Unreserve extension point: once the best node is chosen and before cards are picked, a plugin may
 * reserve what it accounts for (a port, a quota share) and refuse the node. When a later reserve or the card
 * picking fails, every plugin that reserved is told to unreserve, in reverse order, and the task stays
 * unschedulable with the refusal's reason. (The bind's transaction in PostgreSQL remains the source of truth.)
 */
public interface ReservePlugin {
  String name();

  Status reserve(TaskRequest task, NodeInfo node, CycleState state);

  void unreserve(TaskRequest task, NodeInfo node, CycleState state);
}
