package io.heteroflow.controlplane.scheduler.gang;

import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A pending task group as the scheduler decides it: its members in rank order (member i has rank i), the
 * group's declared gpu_type (null: none) and parallelism hint (null: derived from the members).
 */
public record GangRequest(UUID groupId, String tenant, int priority, Instant createdAt, String gpuType,
                          String parallelism, List<TaskRequest> members) {
  public GangRequest {
    members = List.copyOf(members);
  }
}
