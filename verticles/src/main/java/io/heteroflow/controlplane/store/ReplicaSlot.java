package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.TaskStatus;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/**
 * One slot of a service with its latest replica (generation {@code generation}): the replica's state, where it is,
 * its node's state and how it ended. {@code failures} counts the replicas before it that failed quickly in a row.
 * {@code taskId} is null only for a slot whose replica was never inserted.
 */
public record ReplicaSlot(UUID serviceId, int slot, int generation, int failures, UUID taskId, TaskStatus status,
                          String nodeId, String nodeStatus, OffsetDateTime createdAt, OffsetDateTime startedAt,
                          OffsetDateTime finishedAt, String reasonCode, String reasonMessage, Integer exitCode,
                          Integer hostPort, List<Integer> gpuIndices) {

  static ReplicaSlot from(Row row) {
    String status = row.getString("status");
    Integer[] gpus = row.getArrayOfIntegers("gpu_indices");
    return new ReplicaSlot(row.getUUID("service_id"), row.getInteger("slot"), row.getInteger("generation"),
        row.getInteger("failures"), row.getUUID("task_id"), status == null ? null : TaskStatus.fromWire(status),
        row.getString("node_id"), row.getString("node_status"), row.getOffsetDateTime("created_at"),
        row.getOffsetDateTime("started_at"), row.getOffsetDateTime("finished_at"), row.getString("reason_code"),
        row.getString("reason_message"), row.getInteger("exit_code"), row.getInteger("host_port"),
        gpus == null ? List.of() : List.of(gpus));
  }

  /** Whether the slot's replica is pending, placed or stopping: it is not to be re-created. */
  public boolean live() {
    return status != null && !status.isTerminal();
  }
}
