package io.heteroflow.controlplane.store;

import java.util.List;

/**
 * A task group as a user declared it (SPEC §9), validated by the API's strict decoder: its members in rank order
 * (member i gets rank i; rank 0 is the master), each a full task spec of the group's type and priority.
 * {@code parallelism} is the optional hint of which group path to take (tensor, data, pipeline).
 */
public record GroupSpec(String name, String type, String gpuType, String parallelism, int maxRestarts,
                        List<TaskSpec> members) {
  public static final int MAX_MEMBERS = 1024;
  public static final int MAX_RESTARTS = 10;

  public GroupSpec {
    members = List.copyOf(members);
  }

  /** The group's queue position: every member has the same priority (the decoder checks it). */
  public int priority() {
    return members.get(0).priority();
  }
}
