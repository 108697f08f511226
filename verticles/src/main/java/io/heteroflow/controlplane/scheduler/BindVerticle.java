package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.registry.AgentMessages;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.store.BatchBindStore;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.BusPayload;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The bind stage on every control plane: takes a batch of decided tasks off the bus and binds them in one
 * PostgreSQL transaction under the leader's fence (schema in docs/event-bus.md). Which member binds does not
 * matter: the task CAS, the card index and the term fence decide.
 */
public final class BindVerticle extends VerticleBase {
  private final BatchBindStore batchBinds;
  private final ControlPlaneMetrics metrics;

  public BindVerticle(BatchBindStore batchBinds, ControlPlaneMetrics metrics) {
    this.batchBinds = batchBinds;
    this.metrics = metrics;
  }

  /** Completes once the consumer is registered (on the clustered bus: known to every member). */
  @Override
  public Future<?> start() {
    return vertx.eventBus().consumer(BusAddresses.SCHEDULER_BIND, message -> BusPayload.answer(message, this::bind))
        .completion();
  }

  /** A malformed batch is refused as a whole (400 naming the field) before anything is bound. */
  private Future<JsonObject> bind(BusPayload body) {
    BusPayload fence = body.requiredObject("fence");
    LeaderStore.Fence term = new LeaderStore.Fence(fence.requiredString("member"), fence.requiredLong("term"));
    List<BindStore.Request> requests = new ArrayList<>();
    for (BusPayload bind : body.objects("binds")) {
      BusPayload shard = bind.optionalObject("shard");
      requests.add(new BindStore.Request(bind.uuid("task_id"), bind.requiredString("node_id"),
          bind.integers("gpu_indices"), shard == null ? null : new ShardAssignment(
              shard.requiredInteger("card_index"), shard.requiredLong("memory_mb"),
              shard.requiredInteger("compute_percent"),
              shard.requiredString("qos"))));
    }
    return batchBinds.bind(requests, term)
        .onSuccess(result -> metrics.fencedBinds((int) result.outcomes().stream()
            .filter(BindStore.Outcome::fenced).count()))
        .map(result -> new JsonObject()
        .put("outcomes", new JsonArray(result.outcomes().stream().map(BindVerticle::toJson).toList()))
        .put("node_versions", new JsonObject(new HashMap<>(result.nodeVersions()))));
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
        .put("master_port", outcome.masterPort())
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
          outcome.getInteger("master_port"),
          code == null ? null : ReasonCode.valueOf(code), outcome.getString("message"),
          outcome.getBoolean("fenced", false)));
    }
    return outcomes;
  }
}
