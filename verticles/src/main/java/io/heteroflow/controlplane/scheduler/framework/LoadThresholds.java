package io.heteroflow.controlplane.scheduler.framework;

/** Live-load limits re-checked at bind (SPEC §3, §12; values from conf/config.yaml). */
public record LoadThresholds(double cpuPercent, double memoryPercent, double gpuMemoryPercent,
                             double gpuUtilizationPercent, int gpuTemperatureC) {
}
