package io.heteroflow.controlplane.scheduler.framework;

/** Filter extension point: can this node run this task at all? (The snapshot gives the tenant boundary.) */
public interface FilterPlugin {
  String name();

  Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot);
}
