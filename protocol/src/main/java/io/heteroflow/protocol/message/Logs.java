package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/** control plane → agent, request-reply: the log text of a task the agent runs or ran, at most {@code maxBytes}. */
public record Logs(UUID taskId, int maxBytes) implements BusMessage {
  /** What a request that names no limit gets: 1 MiB. */
  public static final int DEFAULT_MAX_BYTES = 1 << 20;

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("task_id", taskId.toString()).put("max_bytes", maxBytes);
  }

  public static Logs fromJson(JsonObject json) {
    BusPayload request = BusMessage.versioned(json);
    UUID taskId = request.uuid("task_id");
    Integer maxBytes = request.optionalInteger("max_bytes");
    if (maxBytes != null && maxBytes < 0) {
      throw request.bad("max_bytes", "0 or more is required");
    }
    return new Logs(taskId, maxBytes == null ? DEFAULT_MAX_BYTES : maxBytes);
  }

  /** The answer: the task's log text (empty when the agent has none). */
  public record Answer(UUID taskId, String text) implements BusMessage {
    @Override
    public JsonObject toJson() {
      return BusMessage.envelope().put("task_id", taskId.toString()).put("text", text);
    }

    public static Answer fromJson(JsonObject json) {
      BusPayload answer = BusMessage.versioned(json);
      String text = answer.optionalString("text");
      return new Answer(answer.uuid("task_id"), text == null ? "" : text);
    }
  }
}
