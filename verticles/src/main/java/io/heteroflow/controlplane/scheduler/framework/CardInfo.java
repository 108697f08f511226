package io.heteroflow.controlplane.scheduler.framework;

/** One GPU card as last reported by its node's agent. */
public record CardInfo(int index, String model, long memoryTotalMb, long memoryUsedMb, int utilizationPercent,
                       int temperatureC, Integer numaNode) {

  public double memoryUsedPercent() {
    return memoryTotalMb <= 0 ? 0 : 100.0 * memoryUsedMb / memoryTotalMb;
  }
}
