package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;

/**
 * The bind stage on every control plane: takes a decided task off the bus and binds it in one PostgreSQL
 * transaction under the leader's fence (schema in docs/event-bus.md). Which member binds does not matter:
 * the task CAS, the card index and the term fence decide.
 */
public final class BindVerticle extends VerticleBase {
  private final Services services;

  public BindVerticle(Services services) {
    this.services = services;
  }

  @Override
  public Future<?> start() {
    vertx.eventBus().<JsonObject>consumer(BusAddresses.SCHEDULER_BIND, this::bind);
    return Future.succeededFuture();
  }

  private void bind(Message<JsonObject> message) {
    JsonObject request = message.body();
    JsonObject fence = request.getJsonObject("fence");
    JsonObject shard = request.getJsonObject("shard");
    services.binds().bind(UUID.fromString(request.getString("task_id")), request.getString("node_id"),
            request.getJsonArray("gpu_indices", new JsonArray()).stream().map(i -> ((Number) i).intValue()).toList(),
            shard == null ? null : new ShardAssignment(shard.getInteger("card_index"), shard.getLong("memory_mb"),
                shard.getInteger("compute_percent"), shard.getString("qos")),
            new LeaderStore.Fence(fence.getString("member"), fence.getLong("term")))
        .onSuccess(outcome -> message.reply(toJson(outcome)))
        .onFailure(e -> message.fail(503, "bind failed: " + e.getMessage()));
  }

  static JsonObject request(UUID taskId, String nodeId, List<Integer> gpuIndices, JsonObject shard,
                            LeaderStore.Fence fence) {
    return new JsonObject().put("task_id", taskId.toString()).put("node_id", nodeId)
        .put("gpu_indices", new JsonArray(List.copyOf(gpuIndices))).put("shard", shard)
        .put("fence", new JsonObject().put("member", fence.member()).put("term", fence.term()));
  }

  static JsonObject toJson(BindStore.Outcome outcome) {
    return new JsonObject().put("bound", outcome.bound()).put("host_port", outcome.hostPort())
        .put("code", outcome.code() == null ? null : outcome.code().name()).put("message", outcome.message())
        .put("fenced", outcome.fenced());
  }

  static BindStore.Outcome fromJson(JsonObject reply) {
    String code = reply.getString("code");
    return new BindStore.Outcome(reply.getBoolean("bound", false), reply.getInteger("host_port"),
        code == null ? null : io.heteroflow.controlplane.scheduler.framework.ReasonCode.valueOf(code),
        reply.getString("message"), reply.getBoolean("fenced", false));
  }
}
