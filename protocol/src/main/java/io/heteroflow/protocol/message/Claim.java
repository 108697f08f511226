package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * agent → control plane: claim a task {@code scheduled → running} by CAS before starting it. {@code retry} says the
 * answer to an earlier claim was lost, so a task already running on that node is granted too.
 */
public record Claim(UUID taskId, String nodeId, boolean retry) implements BusMessage {

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("task_id", taskId.toString()).put("node_id", nodeId).put("retry", retry);
  }

  public static Claim fromJson(JsonObject json) {
    BusPayload claim = BusMessage.versioned(json);
    return new Claim(claim.uuid("task_id"), claim.requiredString("node_id"), claim.bool("retry", false));
  }

  /** The answer: claimed, or not, with the task's status then (null when claimed). */
  public record Answer(boolean claimed, String status) implements BusMessage {
    @Override
    public JsonObject toJson() {
      JsonObject json = BusMessage.envelope().put("claimed", claimed);
      return status == null ? json : json.put("status", status);
    }

    public static Answer fromJson(JsonObject json) {
      BusPayload answer = BusMessage.versioned(json);
      return new Answer(answer.bool("claimed", false), answer.optionalString("status"));
    }
  }
}
