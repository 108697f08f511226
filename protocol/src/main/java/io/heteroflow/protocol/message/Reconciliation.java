package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;

/**
 * The heartbeat's reply: whether the heartbeat was applied, and what PostgreSQL says the node should be running
 * (its tasks {@code scheduled} there) and stopping ({@code stopping} or {@code preempting} there).
 */
public record Reconciliation(boolean applied, List<Run> run, List<UUID> stop) implements BusMessage {
  public Reconciliation {
    run = List.copyOf(run);
    stop = List.copyOf(stop);
  }

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("applied", applied)
        .put("run", new JsonArray(run.stream().map(Run::toJson).toList()))
        .put("stop", new JsonArray(stop.stream().map(UUID::toString).toList()));
  }

  public static Reconciliation fromJson(JsonObject json) {
    var payload = BusMessage.versioned(json);
    return new Reconciliation(payload.bool("applied", false), Run.readAll(payload, "run"), payload.uuids("stop"));
  }
}
