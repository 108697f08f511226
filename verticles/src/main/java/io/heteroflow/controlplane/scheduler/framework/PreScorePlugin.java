package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/** PreScore extension point: sees the feasible nodes once before scoring (e.g. to precompute per task). */
public interface PreScorePlugin {
  String name();

  void preScore(TaskRequest task, List<NodeInfo> feasible);
}
