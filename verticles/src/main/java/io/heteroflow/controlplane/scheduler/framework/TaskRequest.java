package io.heteroflow.controlplane.scheduler.framework;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the scheduler needs to know about one pending task. {@code queuedSince} (when it was created; null when
 * unknown) matters only to preemption's wait threshold, never to placement: the decision memo leaves it out.
 * {@code runtimeSeconds} is how long it is expected to hold what it takes (its declared expected runtime, else its
 * timeout; 0: unknown), what reservations plan with; {@code timeoutSeconds} (0: unknown) is how long it may run at
 * most, what decides whether it may backfill before a reservation (SPEC §13).
 */
public record TaskRequest(UUID id, String tenant, String type, int priority, int gpuRequired, long gpuMemoryMb,
                          String gpuType, List<String> gpuModels, double cpuCores, long memoryMb,
                          Map<String, String> nodeSelector, Map<String, String> labels, Instant queuedSince,
                          int runtimeSeconds, int timeoutSeconds, boolean preemptible) {

  public TaskRequest(UUID id, String tenant, String type, int priority, int gpuRequired, long gpuMemoryMb,
                     String gpuType, List<String> gpuModels, double cpuCores, long memoryMb,
                     Map<String, String> nodeSelector, Map<String, String> labels, Instant queuedSince) {
    this(id, tenant, type, priority, gpuRequired, gpuMemoryMb, gpuType, gpuModels, cpuCores, memoryMb, nodeSelector,
        labels, queuedSince, 0, 0, false);
  }

  public TaskRequest(UUID id, String tenant, String type, int priority, int gpuRequired, long gpuMemoryMb,
                     String gpuType, List<String> gpuModels, double cpuCores, long memoryMb,
                     Map<String, String> nodeSelector, Map<String, String> labels) {
    this(id, tenant, type, priority, gpuRequired, gpuMemoryMb, gpuType, gpuModels, cpuCores, memoryMb, nodeSelector,
        labels, null);
  }

  public TaskRequest {
    gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
    nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }

  /** The label every replica of an inference service carries: the service's id (its task group's uuid). */
  public static final String SERVICE_LABEL = "heteroflow.io/service";

  private static final UUID SHAPE = new UUID(0, 0);

  /** What placement depends on: this request without its id and queue time (the key of the decision memos). */
  public TaskRequest shape() {
    return new TaskRequest(SHAPE, tenant, type, priority, gpuRequired, gpuMemoryMb, gpuType, gpuModels, cpuCores,
        memoryMb, nodeSelector, labels, null, runtimeSeconds, timeoutSeconds, preemptible);
  }

  /** This request expected to hold what it takes for {@code seconds}, at most {@code timeout}. */
  public TaskRequest withTenure(int seconds, int timeout, boolean mayBePreempted) {
    return new TaskRequest(id, tenant, type, priority, gpuRequired, gpuMemoryMb, gpuType, gpuModels, cpuCores,
        memoryMb, nodeSelector, labels, queuedSince, seconds, timeout, mayBePreempted);
  }

  /** Whether this is a shape (a memo's key), not one task: what depends on a task's id or queue time is not judged. */
  public boolean isShape() {
    return SHAPE.equals(id);
  }

  /** The cards it plans with (reservations, estimates): its whole cards, or one for a shard. */
  public int plannedCards() {
    return gpuRequired > 0 ? gpuRequired : isShard() ? 1 : 0;
  }

  /** A fractional task: GPU memory without whole cards (SPEC §3). */
  public boolean isShard() {
    return gpuRequired == 0 && gpuMemoryMb > 0;
  }

  public boolean isInference() {
    return "inference".equals(type);
  }

  /** The inference service this task is a replica of ({@link #SERVICE_LABEL}), or null. */
  public String service() {
    String service = labels.get(SERVICE_LABEL);
    return service == null || service.isBlank() ? null : service;
  }

  public String label(String key) {
    return labels.get(key);
  }
}
