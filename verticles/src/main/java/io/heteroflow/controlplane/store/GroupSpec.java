package io.heteroflow.controlplane.store;

import java.util.List;

/**
 * A task group as a user declared it (SPEC §9), validated by the API's strict decoder: its members in rank order
 * (member i gets rank i; rank 0 is the master), each a full task spec of the group's type and priority.
 * {@code parallelism} is the optional hint of which group path to take (tensor, data, pipeline).
 */
public record GroupSpec(String name, String type, String gpuType, String parallelism, int maxRestarts,
                        List<TaskSpec> members, String queue) {
  public static final int MAX_MEMBERS = 1024;
  public static final int MAX_RESTARTS = 10;

  public GroupSpec {
    members = List.copyOf(members); // queue null: the submitter's default queue, resolved before it is stored
  }

  /** A group in the default queue. */
  public GroupSpec(String name, String type, String gpuType, String parallelism, int maxRestarts,
                   List<TaskSpec> members) {
    this(name, type, gpuType, parallelism, maxRestarts, members, QueueRecord.ROOT);
  }

  public GroupSpec inQueue(String newQueue) {
    return new GroupSpec(name, type, gpuType, parallelism, maxRestarts, members, newQueue);
  }

  /** The most whole cards any member asks for (a queue's cap on one task applies to each member). */
  public int maxMemberCards() {
    return members.stream().mapToInt(TaskSpec::gpuRequired).max().orElse(0);
  }

  /** The group's queue position: every member has the same priority (the decoder checks it). */
  public int priority() {
    return members.get(0).priority();
  }
}
