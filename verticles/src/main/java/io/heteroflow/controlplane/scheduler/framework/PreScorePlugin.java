package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/**
 * PreScore extension point: sees the feasible nodes once before scoring and keeps what it computes for this task
 * in the {@link CycleState} (never in a field). A plugin set with a PreScore plugin is decided without the memo.
 */
public interface PreScorePlugin {
  String name();

  void preScore(TaskRequest task, List<NodeInfo> feasible, CycleState state);
}
