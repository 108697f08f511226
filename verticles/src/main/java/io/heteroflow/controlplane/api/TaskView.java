package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.json.JsonArray;
import io.heteroflow.protocol.message.Checkpoint;
import io.heteroflow.protocol.message.Shard;
import io.vertx.core.json.JsonObject;
import java.time.OffsetDateTime;
import java.util.List;

/** The API view of a task. */
final class TaskView {
  private TaskView() {}

  static JsonObject of(TaskRecord task) {
    JsonObject spec = task.spec();
    return new JsonObject()
        .put("id", task.id().toString())
        .put("name", task.name())
        .put("tenant", task.tenant())
        .put("type", task.type())
        .put("status", task.status().wire())
        .put("priority", task.priority())
        .put("queue", task.queue())
        .put("preemptible", task.preemptible())
        .put("gpu_required", task.gpuRequired())
        .put("gpu_memory_mb", task.gpuMemoryMb())
        .put("gpu_type", task.gpuType())
        .put("node", task.nodeId())
        .put("gpus", new JsonArray(List.copyOf(task.gpuIndices())))
        .put("shard", Shard.toJson(task.shard()))
        .put("host_port", task.hostPort())
        .put("master_port", task.masterPort())
        .put("reason", task.reasonCode() == null ? null
            : new JsonObject().put("code", task.reasonCode()).put("message", task.reasonMessage()))
        // when it is expected to start (the reservation plan), only while it waits; null with a note when unknown
        .put("estimated_start_at", task.status() == TaskStatus.PENDING ? time(task.estimatedStartAt()) : null)
        .put("estimate_note", task.status() == TaskStatus.PENDING ? task.estimateNote() : null)
        .put("expected_runtime_seconds", spec.getValue("expected_runtime_seconds"))
        .put("exit_code", task.exitCode())
        .put("preempt_count", task.preemptCount())
        // a nomination means something only while the task waits for its victims (a bind clears it)
        .put("nominated_node", task.status() == TaskStatus.PENDING ? task.nominatedNode() : null)
        .put("nominated_until", task.status() == TaskStatus.PENDING ? time(task.nominatedUntil()) : null)
        .put("preempting_since", task.status() == TaskStatus.PREEMPTING ? time(task.preemptingSince()) : null)
        .put("group_id", task.groupId() == null ? null : task.groupId().toString())
        .put("rank", task.groupRank())
        .put("group_attempt", task.groupAttempt())
        .put("service_id", task.serviceId() == null ? null : task.serviceId().toString())
        .put("replica_slot", task.replicaSlot())
        .put("replica_generation", task.replicaGeneration())
        .put("image", spec.getString("image"))
        .put("command", spec.getJsonArray("command"))
        .put("env", spec.getJsonObject("env"))
        .put("gpu_model", spec.getJsonArray("gpu_model"))
        .put("cpu_cores", task.cpuCores())
        .put("memory_mb", task.memoryMb())
        .put("timeout_seconds", spec.getValue("timeout_seconds"))
        .put("termination_grace_seconds", task.terminationGraceSeconds())
        .put("checkpoint", Checkpoint.toJson(task.checkpoint()))
        .put("last_checkpoint_at", time(task.lastCheckpointAt()))
        .put("node_selector", spec.getJsonObject("node_selector"))
        .put("labels", spec.getJsonObject("labels"))
        .put("created_at", time(task.createdAt()))
        .put("scheduled_at", time(task.scheduledAt()))
        .put("started_at", time(task.startedAt()))
        .put("finished_at", time(task.finishedAt()));
  }

  private static String time(OffsetDateTime at) {
    return at == null ? null : at.toString();
  }
}
