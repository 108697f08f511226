package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * api / registry → scheduler loop, published: a task was created ({@code taskId}: it goes on the immediate channel)
 * or resources were freed ({@code reason}); either may be null.
 */
public record Kick(UUID taskId, String reason) implements BusMessage {

  public static Kick task(UUID taskId) {
    return new Kick(taskId, null);
  }

  public static Kick because(String reason) {
    return new Kick(null, reason);
  }

  @Override
  public JsonObject toJson() {
    JsonObject json = BusMessage.envelope();
    if (taskId != null) {
      json.put("task_id", taskId.toString());
    }
    return reason == null ? json : json.put("reason", reason);
  }

  public static Kick fromJson(JsonObject json) {
    BusPayload kick = BusMessage.versioned(json);
    return new Kick(kick.has("task_id") ? kick.uuid("task_id") : null, kick.optionalString("reason"));
  }
}
