package io.heteroflow.controlplane.scheduler.framework;

import java.util.Map;

/** PostScore extension point: may adjust the weighted totals (node id → total) before the best is taken. */
public interface PostScorePlugin {
  String name();

  void postScore(TaskRequest task, Map<String, Double> totals);
}
