package io.heteroflow.controlplane.scheduler.plan;

import java.time.Instant;
import java.util.List;

/**
 * What an active task frees when it is expected to end (SPEC §13): its whole cards or its shard's card, its CPU and
 * memory, on its node, at {@code at} (its start plus its declared expected runtime, else plus its timeout).
 */
public record Ending(String nodeId, Instant at, List<Integer> gpuIndices, Integer shardCard, double cpuCores,
                     long memoryMb) {
  public Ending {
    gpuIndices = List.copyOf(gpuIndices);
  }

  /** Whether it holds card {@code index} (whole, or a shard on it). */
  boolean holds(int index) {
    return gpuIndices.contains(index) || (shardCard != null && shardCard == index);
  }
}
