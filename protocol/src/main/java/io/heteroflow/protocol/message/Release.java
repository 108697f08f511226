package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;

/**
 * agent → control plane, at a clean shutdown: the agent process {@code bootId} lets go of node {@code nodeId},
 * so another agent process with the same node id may take the node over at once instead of after the hold
 * window. The hold is cleared only when {@code bootId} is the holder's (a stale release changes nothing).
 */
public record Release(String nodeId, String bootId) implements BusMessage {
  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("node_id", nodeId).put("boot_id", bootId);
  }

  /** A release, or a 400 naming the field: a node id as a heartbeat's, a boot id of 1 to 256 characters. */
  public static Release fromJson(JsonObject json) {
    BusPayload release = BusMessage.versioned(json);
    String nodeId = HeartbeatLimits.nodeId(release);
    String bootId = HeartbeatLimits.bootId(release);
    return new Release(nodeId, bootId);
  }

  /** The answer: whether the hold was cleared (false: the node is held by another boot, or unknown). */
  public record Answer(boolean released) implements BusMessage {
    @Override
    public JsonObject toJson() {
      return BusMessage.envelope().put("released", released);
    }

    public static Answer fromJson(JsonObject json) {
      return new Answer(BusMessage.versioned(json).bool("released", false));
    }
  }
}
