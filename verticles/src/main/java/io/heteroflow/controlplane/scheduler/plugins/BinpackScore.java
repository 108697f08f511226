package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** {@code binpack}: prefer the most utilised node that still fits (default off; beats spread when both are on). */
public final class BinpackScore implements ScorePlugin {
  public static final String NAME = "binpack";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public double score(TaskRequest task, NodeInfo node) {
    return 100 * NodeUtilization.of(node);
  }
}
