package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/** What the scheduler needs to know about one pending task. */
public record TaskRequest(UUID id, String tenant, String type, int priority, int gpuRequired, long gpuMemoryMb,
                          String gpuType, List<String> gpuModels, Map<String, String> nodeSelector,
                          Map<String, String> labels) {

  public TaskRequest {
    gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
    nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }
}
