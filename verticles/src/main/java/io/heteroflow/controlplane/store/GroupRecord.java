package io.heteroflow.controlplane.store;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * One row of {@code task_groups}. {@code status}: pending, scheduled (every member bound), running (every member
 * running), stopping (a stop or a member's failure is stopping the others; {@code ending} says which), then
 * succeeded, failed or stopped. {@code restartCount} is also the current attempt's number.
 * A {@code service} ({@link #isService}) is only running or stopped; its replicas are single tasks in slots,
 * {@code desiredReplicas} of them wanted, made from {@code replicaSpec}; {@code windowOwns} says a schedule window's
 * action holds the count, and {@code replicasBeforeWindow} what it restores.
 */
public record GroupRecord(UUID id, String tenant, String name, String type, String gpuType, String parallelism,
                          int priority, String status, int memberCount, int maxRestarts, int restartCount,
                          String reasonCode, String reasonMessage, String masterNode, String masterAddr,
                          Integer masterPort, String backend, Integer networkDomains, String ending,
                          OffsetDateTime createdAt, OffsetDateTime scheduledAt, OffsetDateTime finishedAt,
                          long version, String queue, OffsetDateTime estimatedStartAt, String estimateNote,
                          String kind, Integer desiredReplicas, JsonObject replicaSpec, JsonObject autoscale,
                          JsonObject windows, boolean windowOwns, Integer replicasBeforeWindow, long rebuilds,
                          OffsetDateTime replicasChangedAt) {
  public static final String GANG = "gang";
  public static final String SERVICE = "service";
  public static final String PENDING = "pending";
  public static final String SCHEDULED = "scheduled";
  public static final String RUNNING = "running";
  public static final String STOPPING = "stopping";
  public static final String SUCCEEDED = "succeeded";
  public static final String FAILED = "failed";
  public static final String STOPPED = "stopped";

  static GroupRecord from(Row row) {
    return new GroupRecord(row.getUUID("id"), row.getString("tenant"), row.getString("name"), row.getString("type"),
        row.getString("gpu_type"), row.getString("parallelism"), row.getInteger("priority"), row.getString("status"),
        row.getInteger("member_count"), row.getInteger("max_restarts"), row.getInteger("restart_count"),
        row.getString("reason_code"), row.getString("reason_message"), row.getString("master_node"),
        row.getString("master_addr"), row.getInteger("master_port"), row.getString("backend"),
        row.getInteger("network_domains"), row.getString("ending"), row.getOffsetDateTime("created_at"),
        row.getOffsetDateTime("scheduled_at"), row.getOffsetDateTime("finished_at"), row.getLong("version"),
        row.getString("queue"), row.getOffsetDateTime("estimated_start_at"), row.getString("estimate_note"),
        row.getString("kind"), row.getInteger("desired_replicas"), (JsonObject) row.getValue("replica_spec"),
        (JsonObject) row.getValue("autoscale"), (JsonObject) row.getValue("windows"), row.getBoolean("window_owns"),
        row.getInteger("replicas_before_window"), row.getLong("rebuilds"),
        row.getOffsetDateTime("replicas_changed_at"));
  }

  /** An inference service (replicas in slots, SPEC §9 windows), not a gang. */
  public boolean isService() {
    return SERVICE.equals(kind);
  }

  public boolean isFinished() {
    return SUCCEEDED.equals(status) || FAILED.equals(status) || STOPPED.equals(status);
  }
}
