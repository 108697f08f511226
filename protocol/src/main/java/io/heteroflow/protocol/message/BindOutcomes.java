package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The bind verticle's answer to a {@link BindBatch}: one outcome per bind, in order, and the version each node
 * the batch wrote has after it (the leader's snapshot keeps its staged view of those nodes).
 */
public record BindOutcomes(List<Outcome> outcomes, Map<String, Long> nodeVersions) implements BusMessage {
  public BindOutcomes {
    outcomes = List.copyOf(outcomes);
    nodeVersions = Map.copyOf(nodeVersions);
  }

  /**
   * Bound (with the host port of an inference task and the master port every bound task gets), or refused with a
   * reason code and message; {@code fenced} says the sender's term has passed.
   */
  public record Outcome(boolean bound, Integer hostPort, Integer masterPort, String code, String message,
                        boolean fenced) {
    JsonObject toJson() {
      return new JsonObject().put("bound", bound).put("host_port", hostPort).put("master_port", masterPort)
          .put("code", code).put("message", message).put("fenced", fenced);
    }

    static Outcome read(BusPayload outcome) {
      return new Outcome(outcome.bool("bound", false), outcome.optionalInteger("host_port"),
          outcome.optionalInteger("master_port"), outcome.optionalString("code"), outcome.optionalString("message"),
          outcome.bool("fenced", false));
    }
  }

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("outcomes", new JsonArray(outcomes.stream().map(Outcome::toJson).toList()))
        .put("node_versions", new JsonObject(new HashMap<>(nodeVersions)));
  }

  public static BindOutcomes fromJson(JsonObject json) {
    BusPayload reply = BusMessage.versioned(json);
    List<Outcome> outcomes = new ArrayList<>();
    reply.objects("outcomes").forEach(outcome -> outcomes.add(Outcome.read(outcome)));
    Map<String, Long> versions = new HashMap<>();
    BusPayload nodeVersions = reply.optionalObject("node_versions");
    if (nodeVersions != null) {
      nodeVersions.json().fieldNames().forEach(node -> versions.put(node, nodeVersions.requiredLong(node)));
    }
    return new BindOutcomes(outcomes, versions);
  }
}
