package io.heteroflow.controlplane.scheduler.framework;

/** Score extension point: how good is this (already feasible) node for this task, in [0, 100]. */
public interface ScorePlugin {
  String name();

  int score(TaskRequest task, NodeInfo node);
}
