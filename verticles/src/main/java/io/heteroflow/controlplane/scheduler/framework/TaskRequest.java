package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/** What the scheduler needs to know about one pending task. */
public record TaskRequest(UUID id, String tenant, String type, int priority, int gpuRequired, long gpuMemoryMb,
                          String gpuType, List<String> gpuModels, double cpuCores, long memoryMb,
                          Map<String, String> nodeSelector, Map<String, String> labels) {

  public TaskRequest {
    gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
    nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }

  /** A fractional task: GPU memory without whole cards (SPEC §3). */
  public boolean isShard() {
    return gpuRequired == 0 && gpuMemoryMb > 0;
  }

  public boolean isInference() {
    return "inference".equals(type);
  }

  public String label(String key) {
    return labels.get(key);
  }
}
