package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/** control plane → agent: stop this task (SIGTERM to its process group, the grace, then SIGKILL). */
public record Stop(UUID taskId) implements BusMessage {

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("task_id", taskId.toString());
  }

  public static Stop fromJson(JsonObject json) {
    return new Stop(BusMessage.versioned(json).uuid("task_id"));
  }
}
