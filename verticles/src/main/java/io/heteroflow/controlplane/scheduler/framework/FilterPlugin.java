package io.heteroflow.controlplane.scheduler.framework;

/**
 * Filter extension point: can this node run this task at all? (The snapshot gives the tenant boundary.) Filters
 * run in registration order and the first refusal names the cause; a filter reads the {@link CycleState} but does
 * not write it (nodes may be filtered on any thread, and the memo reuses verdicts across decisions of one shape).
 */
public interface FilterPlugin {
  String name();

  Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state);
}
