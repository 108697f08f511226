package io.heteroflow.launcher.simulate;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * The simulator's best-fit baseline (as in the FGD paper): the node left with the least free capacity after
 * the placement wins; free capacity is the mean of the free fractions of CPU, memory and whole cards.
 */
final class BestFitScore implements ScorePlugin {
  static final String NAME = "bestfit";
  static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, BestFitScore::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    double cpu = fraction(node.cpuFree() - task.cpuCores(), node.cpuCores());
    double memory = fraction(node.memoryFreeMb() - task.memoryMb(), node.memoryTotalGb() * 1024);
    double cards = fraction(node.gpuTotal() - node.gpuUsed() - task.gpuRequired(), node.gpuTotal());
    return 100 * (1 - (cpu + memory + cards) / 3);
  }

  private static double fraction(double free, double total) {
    return total <= 0 ? 0 : Math.max(0, Math.min(1, free / total));
  }
}
