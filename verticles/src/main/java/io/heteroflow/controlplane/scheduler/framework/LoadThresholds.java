package io.heteroflow.controlplane.scheduler.framework;

/** Live-load limits re-checked at bind (SPEC §3, §12). */
public record LoadThresholds(double cpuPercent, double memoryPercent, double gpuMemoryPercent,
                             double gpuUtilizationPercent, int gpuTemperatureC) {

  public static final LoadThresholds DEFAULTS = new LoadThresholds(90, 90, 95, 95, 79);
}
