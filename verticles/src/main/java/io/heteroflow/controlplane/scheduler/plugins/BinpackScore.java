package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** {@code binpack}: prefer the most utilised node that still fits (default off; beats spread when both are on). */
public final class BinpackScore implements ScorePlugin {
  public static final String NAME = "binpack";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, BinpackScore::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    return 100 * NodeUtilization.of(node);
  }
}
