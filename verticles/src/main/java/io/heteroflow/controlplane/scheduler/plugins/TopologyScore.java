package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * {@code topology} (SPEC §4.1): base 50; the task's preferred region (label {@code region}) matching the
 * node's +5, zone +15, rack +10, each on its own (at most 80). A node or task without those fields scores
 * the neutral base, so unset fields never change a decision. A preference, never a filter.
 */
public final class TopologyScore implements ScorePlugin {
  public static final String NAME = "topology";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, TopologyScore::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    return 50 + bonus(task.label("region"), node.region(), 5) + bonus(task.label("zone"), node.zone(), 15)
        + bonus(task.label("rack"), node.rack(), 10);
  }

  private static int bonus(String wanted, String actual, int points) {
    return wanted != null && wanted.equals(actual) ? points : 0;
  }
}
