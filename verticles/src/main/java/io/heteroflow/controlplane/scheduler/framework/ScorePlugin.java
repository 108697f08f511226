package io.heteroflow.controlplane.scheduler.framework;

/**
 * Score extension point: how good is this (already feasible) node for this task, in [0, 100] (fractions count;
 * outside the range is clamped). May run on several threads at once: read the {@link CycleState}, do not write it.
 */
public interface ScorePlugin {
  String name();

  double score(TaskRequest task, NodeInfo node, CycleState state);
}
