package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;

/** control plane, published cluster-wide when a member becomes leader: which member, under which term. */
public record LeadershipChange(String memberId, long term) implements BusMessage {

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("member_id", memberId).put("term", term);
  }

  public static LeadershipChange fromJson(JsonObject json) {
    BusPayload change = BusMessage.versioned(json);
    return new LeadershipChange(change.requiredString("member_id"), change.requiredLong("term"));
  }
}
