package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * agent → control plane: a liveness-only beat between full {@link Heartbeat heartbeats} (docs/event-bus.md "Beat"):
 * it renews the node's lease and reports the tasks the agent runs, nothing else. It is applied only for the node's
 * holder (its boot id), while the node is online, and when newer than the last beat; the answer is the same
 * {@link Reconciliation} as a heartbeat's, and {@code applied: false} asks the agent for a full heartbeat.
 */
public record Beat(String nodeId, String bootId, long seq, List<String> activeTasks) implements BusMessage {
  public Beat {
    activeTasks = List.copyOf(activeTasks);
  }

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("node_id", nodeId).put("boot_id", bootId).put("seq", seq)
        .put("active_tasks", new JsonArray(activeTasks));
  }

  /**
   * A beat, or a 400 naming the field: a node id as a heartbeat's, a boot id of 1 to 256 characters, a sequence
   * number, and {@code active_tasks} as a heartbeat's (task ids, at most 1,024; required: a beat always says).
   */
  public static Beat fromJson(JsonObject json) {
    BusPayload beat = BusMessage.versioned(json);
    String nodeId = HeartbeatLimits.nodeId(beat);
    String bootId = HeartbeatLimits.bootId(beat);
    Long seq = beat.optionalLong("seq");
    if (seq == null) {
      throw beat.bad("seq", "a sequence number is required");
    }
    List<String> active = HeartbeatLimits.activeTasks(beat);
    if (active == null) {
      throw beat.bad("active_tasks", "the tasks the agent runs (an array of task ids, possibly empty) are required");
    }
    return new Beat(nodeId, bootId, seq, active);
  }
}
