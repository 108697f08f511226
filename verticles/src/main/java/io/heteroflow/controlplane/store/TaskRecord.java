package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Checkpoint;
import io.heteroflow.protocol.message.Run;
import io.heteroflow.protocol.message.Shard;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One row of {@code tasks}; {@code nominatedNode} is meaningful only while it is pending and not expired.
 * {@code serviceId} is set on a replica of an inference service, with its slot and the slot's generation.
 */
public record TaskRecord(UUID id, String tenant, String name, String type, TaskStatus status, int priority,
                         boolean preemptible, int gpuRequired, long gpuMemoryMb, String gpuType, UUID groupId,
                         JsonObject spec, String nodeId, List<Integer> gpuIndices, String reasonCode,
                         String reasonMessage, Integer exitCode, int preemptCount, OffsetDateTime createdAt,
                         OffsetDateTime scheduledAt, OffsetDateTime startedAt, OffsetDateTime finishedAt,
                         long version, double cpuCores, long memoryMb, Integer hostPort, Shard shard,
                         Long boundTerm, Integer masterPort, OffsetDateTime lastCheckpointAt,
                         OffsetDateTime preemptingSince, String nominatedNode, OffsetDateTime nominatedUntil,
                         Integer groupRank, Integer groupAttempt, JsonObject distributed, String queue,
                         OffsetDateTime estimatedStartAt, String estimateNote, UUID serviceId,
                         Integer replicaSlot, Integer replicaGeneration) {

  static TaskRecord from(Row row) {
    Integer[] indices = row.getArrayOfIntegers("gpu_indices");
    return new TaskRecord(row.getUUID("id"), row.getString("tenant"), row.getString("name"), row.getString("type"),
        TaskStatus.fromWire(row.getString("status")), row.getInteger("priority"), row.getBoolean("preemptible"),
        row.getInteger("gpu_required"), row.getLong("gpu_memory_mb"), row.getString("gpu_type"),
        row.getUUID("group_id"), (JsonObject) row.getValue("spec"), row.getString("node_id"),
        indices == null ? List.of() : List.of(indices), row.getString("reason_code"), row.getString("reason_message"),
        row.getInteger("exit_code"), row.getInteger("preempt_count"), row.getOffsetDateTime("created_at"),
        row.getOffsetDateTime("scheduled_at"), row.getOffsetDateTime("started_at"),
        row.getOffsetDateTime("finished_at"), row.getLong("version"), row.getDouble("cpu_cores"),
        row.getLong("memory_mb"), row.getInteger("host_port"), Shard.fromJson((JsonObject) row.getValue("shard")),
        row.getLong("bound_term"), row.getInteger("master_port"), row.getOffsetDateTime("last_checkpoint_at"),
        row.getOffsetDateTime("preempting_since"), row.getString("nominated_node"),
        row.getOffsetDateTime("nominated_until"), row.getInteger("group_rank"), row.getInteger("group_attempt"),
        (JsonObject) row.getValue("distributed"), row.getString("queue"), row.getOffsetDateTime("estimated_start_at"),
        row.getString("estimate_note"), row.getUUID("service_id"), row.getInteger("replica_slot"),
        row.getInteger("replica_generation"));
  }

  /** The Run message for this task bound where the row says (repeated in heartbeat replies until claimed). */
  public Run run() {
    return run(gpuIndices, shard, hostPort, masterPort, boundTerm);
  }

  /** The Run message for this task on these cards or this shard, bound under {@code term}. */
  public Run run(List<Integer> cards, Shard onShard, Integer hostPortBound, Integer masterPortBound, Long term) {
    return run(cards, onShard, hostPortBound, masterPortBound, term, Run.Distributed.fromJson(distributed));
  }

  /** The same, for a group member bound with its place in the group's world. */
  public Run run(List<Integer> cards, Shard onShard, Integer hostPortBound, Integer masterPortBound, Long term,
                 Run.Distributed inGroup) {
    return new Run(id, term == null ? 0 : term, preemptCount, name, spec.getString("image"), command(), env(), cards, onShard,
        hostPortBound, masterPortBound, timeoutSeconds(), terminationGraceSeconds(), checkpoint(), inGroup, tenant);
  }

  public List<String> command() {
    List<String> command = new ArrayList<>();
    spec.getJsonArray("command", new io.vertx.core.json.JsonArray()).forEach(part -> command.add((String) part));
    return command;
  }

  public Map<String, String> env() {
    return stringMap(spec.getJsonObject("env"));
  }

  /** The task's checkpoint handshake, or null. */
  public Checkpoint checkpoint() {
    return Checkpoint.fromJson(spec.getJsonObject("checkpoint"));
  }

  public int terminationGraceSeconds() {
    return spec.getInteger("termination_grace_seconds", TaskSpec.DEFAULT_TERMINATION_GRACE_SECONDS);
  }

  public int timeoutSeconds() {
    return spec.getInteger("timeout_seconds", TaskSpec.DEFAULT_TIMEOUT_SECONDS);
  }

  public TaskRequest toRequest() {
    List<String> models = new ArrayList<>();
    spec.getJsonArray("gpu_model", new io.vertx.core.json.JsonArray()).forEach(model -> models.add((String) model));
    return new TaskRequest(id, tenant, type, priority, gpuRequired, gpuMemoryMb, gpuType, models, cpuCores, memoryMb,
        stringMap(spec.getJsonObject("node_selector")), stringMap(spec.getJsonObject("labels")), createdAt.toInstant(),
        runtimeSeconds(), timeoutSeconds(), preemptible);
  }

  /** How long it holds what it takes, as reservations plan it: its declared expected runtime, else its timeout. */
  public int runtimeSeconds() {
    return spec.getInteger("expected_runtime_seconds", timeoutSeconds());
  }

  static Map<String, String> stringMap(JsonObject json) {
    Map<String, String> map = new HashMap<>();
    if (json != null) {
      json.forEach(entry -> map.put(entry.getKey(), String.valueOf(entry.getValue())));
    }
    return map;
  }
}
