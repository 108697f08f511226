package io.heteroflow.controlplane.scheduler.framework;

import io.heteroflow.protocol.TaskStatus;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * One active task on a node as preemption sees it: what it holds there (whole cards, or a shard's memory on one
 * card, CPU, memory), and what decides whether and in which order it may be a victim. {@code startedAt} is null
 * for a task not yet running; {@code lastCheckpointAt} null when it never reported a checkpoint. A member of a
 * task group ({@code groupId}) is preemptible only when every member of its group is a valid victim, and it is
 * preempted only together with all of them (SPEC §9). {@code queue} is the queue its use is charged to and
 * {@code gpuEq} what it holds in GPU-equivalents: reclaim (SPEC §13) takes only borrowed use.
 */
public record Occupant(UUID taskId, String tenant, String type, int priority, boolean preemptible, TaskStatus status,
                       Instant createdAt, Instant startedAt, Instant lastCheckpointAt, List<Integer> gpuIndices,
                       Integer shardCard, long shardMemoryMb, double cpuCores, long memoryMb, UUID groupId,
                       String queue, double gpuEq) {
  public Occupant {
    gpuIndices = List.copyOf(gpuIndices);
    queue = queue == null ? "root" : queue;
  }

  /** A task of the root queue, each whole card one GPU-equivalent. */
  public Occupant(UUID taskId, String tenant, String type, int priority, boolean preemptible, TaskStatus status,
                  Instant createdAt, Instant startedAt, Instant lastCheckpointAt, List<Integer> gpuIndices,
                  Integer shardCard, long shardMemoryMb, double cpuCores, long memoryMb, UUID groupId) {
    this(taskId, tenant, type, priority, preemptible, status, createdAt, startedAt, lastCheckpointAt, gpuIndices,
        shardCard, shardMemoryMb, cpuCores, memoryMb, groupId, "root", gpuIndices.size());
  }

  /** A task of no group. */
  public Occupant(UUID taskId, String tenant, String type, int priority, boolean preemptible, TaskStatus status,
                  Instant createdAt, Instant startedAt, Instant lastCheckpointAt, List<Integer> gpuIndices,
                  Integer shardCard, long shardMemoryMb, double cpuCores, long memoryMb) {
    this(taskId, tenant, type, priority, preemptible, status, createdAt, startedAt, lastCheckpointAt, gpuIndices,
        shardCard, shardMemoryMb, cpuCores, memoryMb, null);
  }

  public boolean holdsShard() {
    return shardCard != null;
  }

  public Occupant withStatus(TaskStatus other) {
    return new Occupant(taskId, tenant, type, priority, preemptible, other, createdAt, startedAt, lastCheckpointAt,
        gpuIndices, shardCard, shardMemoryMb, cpuCores, memoryMb, groupId, queue, gpuEq);
  }

  /** This occupant charged to {@code other} holding {@code equivalents} GPU-eq. */
  public Occupant inQueue(String other, double equivalents) {
    return new Occupant(taskId, tenant, type, priority, preemptible, status, createdAt, startedAt, lastCheckpointAt,
        gpuIndices, shardCard, shardMemoryMb, cpuCores, memoryMb, groupId, other, equivalents);
  }
}
