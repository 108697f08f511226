package io.heteroflow.controlplane.scheduler.framework;

import io.heteroflow.protocol.TaskStatus;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * One active task on a node as preemption sees it: what it holds there (whole cards, or a shard's memory on one
 * card, CPU, memory), and what decides whether and in which order it may be a victim. {@code startedAt} is null
 * for a task not yet running; {@code lastCheckpointAt} null when it never reported a checkpoint.
 */
public record Occupant(UUID taskId, String tenant, String type, int priority, boolean preemptible, TaskStatus status,
                       Instant createdAt, Instant startedAt, Instant lastCheckpointAt, List<Integer> gpuIndices,
                       Integer shardCard, long shardMemoryMb, double cpuCores, long memoryMb) {
  public Occupant {
    gpuIndices = List.copyOf(gpuIndices);
  }

  public boolean holdsShard() {
    return shardCard != null;
  }

  public Occupant withStatus(TaskStatus other) {
    return new Occupant(taskId, tenant, type, priority, preemptible, other, createdAt, startedAt, lastCheckpointAt,
        gpuIndices, shardCard, shardMemoryMb, cpuCores, memoryMb);
  }
}
