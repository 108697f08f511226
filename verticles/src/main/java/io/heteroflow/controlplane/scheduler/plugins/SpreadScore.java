package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** {@code spread}: prefer the least utilised node (default on). */
public final class SpreadScore implements ScorePlugin {
  public static final String NAME = "spread";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public double score(TaskRequest task, NodeInfo node) {
    return 100 * (1 - NodeUtilization.of(node));
  }
}
