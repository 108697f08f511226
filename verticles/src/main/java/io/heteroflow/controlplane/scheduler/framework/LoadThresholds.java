package io.heteroflow.controlplane.scheduler.framework;

import java.util.HashMap;
import java.util.Map;

/**
 * Live-load limits (SPEC §3, §12; values from conf/config.yaml): judged on each node's last heartbeat as the
 * pipeline's last filter ({@link LoadThresholdFilter}) and again on live rows at bind. A node at or over the CPU
 * or memory limit takes no task; a card at or over the GPU memory, utilisation or temperature limit is never
 * picked.
 */
public record LoadThresholds(double cpuPercent, double memoryPercent, double gpuMemoryPercent,
                             double gpuUtilizationPercent, int gpuTemperatureC) {

  /** The node-wide limit the node's last heartbeat is at or over ("CPU at or above 90 %"), or null. */
  public String nodeOver(NodeInfo node) {
    if (node.cpuPercent() >= cpuPercent) {
      return "CPU at or above " + percent(cpuPercent) + " %";
    }
    double memoryTotalMb = node.memoryTotalGb() * 1024;
    if (memoryTotalMb > 0 && 100.0 * node.memoryUsedMb() / memoryTotalMb >= memoryPercent) {
      return "memory at or above " + percent(memoryPercent) + " %";
    }
    return null;
  }

  /** The card is at or over a card limit: GPU memory, utilisation or temperature (the bind's checks). */
  public boolean cardOver(CardInfo card) {
    return card.memoryTotalMb() > 0 && card.memoryUsedPercent() >= gpuMemoryPercent
        || card.utilizationPercent() >= gpuUtilizationPercent || card.temperatureC() >= gpuTemperatureC;
  }

  /**
   * The node as card picking and shard placement may use it: each card over a limit counts as held (the same
   * NodeInfo when none is).
   */
  public NodeInfo usable(NodeInfo node) {
    Map<Integer, CardUse> held = null;
    for (CardInfo card : node.cards()) {
      if (cardOver(card)) {
        if (held == null) {
          held = new HashMap<>(node.cardUse());
        }
        CardUse use = node.use(card.index());
        held.put(card.index(), new CardUse(use.wholeTasks() + 1, use.shards(), use.shardMemoryMb(), use.tenants()));
      }
    }
    return held == null ? node : node.withCardUse(held);
  }

  private static String percent(double value) {
    return value == Math.rint(value) ? String.valueOf((long) value) : String.valueOf(value);
  }
}
