package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;

/**
 * A fractional GPU: which card, how much of its memory, what share of its compute, and the QoS level that
 * enforces it ({@link io.heteroflow.protocol.ShardQos}). Part of a Run and a Bind, and stored as this JSON in
 * the task row: this record is the one place that form is written and read.
 */
public record Shard(int cardIndex, long memoryMb, int computePercent, String qos) {

  public JsonObject toJson() {
    return new JsonObject().put("card_index", cardIndex).put("memory_mb", memoryMb)
        .put("compute_percent", computePercent).put("qos", qos);
  }

  /** The shard of a message, or null when it has none. */
  public static Shard read(BusPayload shard) {
    return shard == null ? null : new Shard(shard.requiredInteger("card_index"), shard.requiredLong("memory_mb"),
        shard.requiredInteger("compute_percent"), shard.requiredString("qos"));
  }

  /** The shard of stored JSON (a task row's {@code shard} column), or null. */
  public static Shard fromJson(JsonObject json) {
    return json == null ? null : read(BusPayload.of(json));
  }

  /** Its JSON, or null for no shard. */
  public static JsonObject toJson(Shard shard) {
    return shard == null ? null : shard.toJson();
  }
}
