package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * leader's scheduler loop → any member's bind verticle: a round's placements over disjoint nodes, bound in one
 * PostgreSQL transaction under the leader's {@code fence} (its member id and term).
 */
public record BindBatch(List<Bind> binds, Fence fence) implements BusMessage {
  public BindBatch {
    binds = List.copyOf(binds);
  }

  /** One placement: this task on these whole cards of this node, or on this shard. */
  public record Bind(UUID taskId, String nodeId, List<Integer> gpuIndices, Shard shard) {
    public Bind {
      gpuIndices = List.copyOf(gpuIndices);
    }

    JsonObject toJson() {
      return new JsonObject().put("task_id", taskId.toString()).put("node_id", nodeId)
          .put("gpu_indices", new JsonArray(gpuIndices)).put("shard", Shard.toJson(shard));
    }

    static Bind read(BusPayload bind) {
      return new Bind(bind.uuid("task_id"), bind.requiredString("node_id"), bind.integers("gpu_indices"),
          Shard.read(bind.optionalObject("shard")));
    }
  }

  /** Who decided: the leader's member id and term, checked against PostgreSQL's current term before binding. */
  public record Fence(String member, long term) {
    JsonObject toJson() {
      return new JsonObject().put("member", member).put("term", term);
    }

    static Fence read(BusPayload fence) {
      return new Fence(fence.requiredString("member"), fence.requiredLong("term"));
    }
  }

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("binds", new JsonArray(binds.stream().map(Bind::toJson).toList()))
        .put("fence", fence.toJson());
  }

  /** A batch, or a 400 naming the first malformed field: a malformed batch is refused whole. */
  public static BindBatch fromJson(JsonObject json) {
    BusPayload batch = BusMessage.versioned(json);
    Fence fence = Fence.read(batch.requiredObject("fence"));
    List<Bind> binds = new ArrayList<>();
    batch.objects("binds").forEach(bind -> binds.add(Bind.read(bind)));
    return new BindBatch(binds, fence);
  }
}
