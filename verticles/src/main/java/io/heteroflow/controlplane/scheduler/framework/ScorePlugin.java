package io.heteroflow.controlplane.scheduler.framework;

/** Score extension point: how good is this (already feasible) node for this task, in [0, 100] (fractions count). */
public interface ScorePlugin {
  String name();

  double score(TaskRequest task, NodeInfo node);
}
