package io.heteroflow.controlplane.scheduler.framework;

/** Filter extension point: can this node run this task at all? */
public interface FilterPlugin {
  String name();

  Status filter(TaskRequest task, NodeInfo node);
}
