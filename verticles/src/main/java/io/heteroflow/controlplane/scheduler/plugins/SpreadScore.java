package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** {@code spread}: prefer the least utilised node (default on). */
public final class SpreadScore implements ScorePlugin {
  public static final String NAME = "spread";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, SpreadScore::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    return 100 * (1 - NodeUtilization.of(node));
  }
}
