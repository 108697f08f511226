package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;

/**
 * The one utilisation computation that spread and binpack share (SPEC §2.3): the mean of CPU (heartbeat
 * percent), memory (used MB / (total GB × 1024)) and GPU (cards in use / total cards), each in [0, 1].
 */
public final class NodeUtilization {
  private NodeUtilization() {}

  public static double of(NodeInfo node) {
    double cpu = clamp(node.cpuPercent() / 100.0);
    double memory = node.memoryTotalGb() <= 0 ? 0 : clamp(node.memoryUsedMb() / (node.memoryTotalGb() * 1024.0));
    double gpu = node.gpuTotal() <= 0 ? 0 : clamp((double) node.gpuUsed() / node.gpuTotal());
    return (cpu + memory + gpu) / 3.0;
  }

  private static double clamp(double value) {
    return Math.max(0, Math.min(1, value));
  }
}
