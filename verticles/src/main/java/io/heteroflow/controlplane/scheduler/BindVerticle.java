package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.registry.AgentMessages;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The bind stage on every control plane: takes a batch of decided tasks off the bus and binds them in one
 * PostgreSQL transaction under the leader's fence (schema in docs/event-bus.md). Which member binds does not
 * matter: the task CAS, the card index and the term fence decide.
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
    JsonObject body = message.body();
    JsonObject fence = body.getJsonObject("fence");
    List<BindStore.Request> requests = new ArrayList<>();
    for (Object each : body.getJsonArray("binds", new JsonArray())) {
      JsonObject bind = (JsonObject) each;
      JsonObject shard = bind.getJsonObject("shard");
      requests.add(new BindStore.Request(UUID.fromString(bind.getString("task_id")), bind.getString("node_id"),
          bind.getJsonArray("gpu_indices", new JsonArray()).stream().map(i -> ((Number) i).intValue()).toList(),
          shard == null ? null : new ShardAssignment(shard.getInteger("card_index"), shard.getLong("memory_mb"),
              shard.getInteger("compute_percent"), shard.getString("qos"))));
    }
    services.batchBinds().bind(requests, new LeaderStore.Fence(fence.getString("member"), fence.getLong("term")))
        .onSuccess(result -> services.metrics().fencedBinds((int) result.outcomes().stream()
            .filter(BindStore.Outcome::fenced).count()))
        .onSuccess(result -> message.reply(new JsonObject()
            .put("outcomes", new JsonArray(result.outcomes().stream().map(BindVerticle::toJson).toList()))
            .put("node_versions", new JsonObject(new HashMap<>(result.nodeVersions())))))
        .onFailure(e -> message.fail(503, "bind failed: " + e.getMessage()));
  }

  /** The Bind message for a batch of placements under one fence. */
  public static JsonObject request(List<BindStore.Request> requests, LeaderStore.Fence fence) {
    JsonArray binds = new JsonArray();
    for (BindStore.Request request : requests) {
      binds.add(new JsonObject().put("task_id", request.taskId().toString()).put("node_id", request.nodeId())
          .put("gpu_indices", new JsonArray(request.gpuIndices())).put("shard", AgentMessages.shard(request.shard())));
    }
    return new JsonObject().put("binds", binds)
        .put("fence", new JsonObject().put("member", fence.member()).put("term", fence.term()));
  }

  static JsonObject toJson(BindStore.Outcome outcome) {
    return new JsonObject().put("bound", outcome.bound()).put("host_port", outcome.hostPort())
        .put("code", outcome.code() == null ? null : outcome.code().name()).put("message", outcome.message())
        .put("fenced", outcome.fenced());
  }

  /** The version each node written by the batch has after it (see BatchBindStore.Result). */
  public static Map<String, Long> nodeVersions(JsonObject reply) {
    Map<String, Long> versions = new HashMap<>();
    reply.getJsonObject("node_versions", new JsonObject()).forEach(entry ->
        versions.put(entry.getKey(), ((Number) entry.getValue()).longValue()));
    return versions;
  }

  /** The BindOutcomes of a reply, in the order of the request's binds. */
  public static List<BindStore.Outcome> outcomes(JsonObject reply) {
    List<BindStore.Outcome> outcomes = new ArrayList<>();
    for (Object each : reply.getJsonArray("outcomes", new JsonArray())) {
      JsonObject outcome = (JsonObject) each;
      String code = outcome.getString("code");
      outcomes.add(new BindStore.Outcome(outcome.getBoolean("bound", false), outcome.getInteger("host_port"),
          code == null ? null : ReasonCode.valueOf(code), outcome.getString("message"),
          outcome.getBoolean("fenced", false)));
    }
    return outcomes;
  }
}
