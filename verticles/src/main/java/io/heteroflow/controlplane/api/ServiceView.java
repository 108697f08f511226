package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.service.ReplicaPlan;
import io.heteroflow.controlplane.service.ScheduleWindows;
import io.heteroflow.controlplane.service.ServiceHealth;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.ReplicaSlot;
import io.heteroflow.controlplane.store.ServiceStore;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;

/**
 * What a user sees of an inference service: {@code replicas {desired, running, pending}}, {@code rebuilds},
 * {@code status} (Running, Degraded, Paused, Stopped) with its reason, {@code window {state, next_edge_at,
 * owns_replicas}} when it has schedule windows, and in the full view each slot's current replica.
 */
final class ServiceView {
  private ServiceView() {}

  static JsonObject summary(ServiceStore.Service service, List<ReplicaSlot> slots, Instant now) {
    GroupRecord group = service.group();
    ServiceHealth health = ServiceHealth.of(group, slots, service.tenantActive(), now);
    JsonObject window = null;
    if (group.windows() != null) {
      ScheduleWindows windows = ScheduleWindows.fromJson(group.windows());
      Instant edge = windows.nextEdge(now);
      window = new JsonObject().put("state", windows.isOpen(now) ? "open" : "closed")
          .put("next_edge_at", edge == null ? null : edge.toString()).put("owns_replicas", group.windowOwns())
          .put("action", windows.action().wire()).put("replicas_before_window", group.replicasBeforeWindow());
    }
    return new JsonObject().put("id", group.id().toString()).put("name", group.name()).put("tenant", group.tenant())
        .put("type", group.type()).put("kind", GroupRecord.SERVICE).put("gpu_type", group.gpuType())
        .put("priority", group.priority()).put("queue", group.queue()).put("status", health.status())
        .put("reason", health.reasonMessage() == null ? null
            : new JsonObject().put("code", health.reasonCode()).put("message", health.reasonMessage()))
        .put("replicas", new JsonObject().put("desired", health.desired()).put("running", health.running())
            .put("pending", health.pending()))
        .put("rebuilds", group.rebuilds())
        .put("autoscale", group.autoscale())
        .put("windows", group.windows())
        .put("window", window)
        .put("created_at", String.valueOf(group.createdAt()))
        .put("finished_at", group.finishedAt() == null ? null : group.finishedAt().toString());
  }

  static JsonObject of(ServiceStore.Service service, List<ReplicaSlot> slots, Instant now) {
    JsonArray list = new JsonArray();
    for (ReplicaSlot slot : slots) {
      int failures = ReplicaPlan.failuresWith(slot);
      Instant retry = slot.live() ? null : ReplicaPlan.retryAt(slot);
      list.add(new JsonObject().put("slot", slot.slot()).put("generation", slot.generation())
          .put("task_id", slot.taskId() == null ? null : slot.taskId().toString())
          .put("status", slot.status() == null ? null : slot.status().wire()).put("node", slot.nodeId())
          .put("host_port", slot.hostPort()).put("gpus", new JsonArray(List.copyOf(slot.gpuIndices())))
          .put("failures_in_a_row", failures)
          .put("next_try_at", retry != null && retry.isAfter(now) ? retry.toString() : null)
          .put("reason", slot.reasonCode() == null ? null
              : new JsonObject().put("code", slot.reasonCode()).put("message", slot.reasonMessage())));
    }
    return summary(service, slots, now).put("slots", list);
  }
}
