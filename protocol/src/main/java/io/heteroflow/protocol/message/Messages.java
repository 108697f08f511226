package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/** Every message of the bus protocol by the name docs/event-bus.md gives it, with the reader of its JSON. */
public final class Messages {
  private Messages() {}

  public static final Map<String, Function<JsonObject, ? extends BusMessage>> READERS = readers();

  private static Map<String, Function<JsonObject, ? extends BusMessage>> readers() {
    Map<String, Function<JsonObject, ? extends BusMessage>> readers = new LinkedHashMap<>();
    readers.put("Heartbeat", Heartbeat::fromJson);
    readers.put("Reconciliation", Reconciliation::fromJson);
    readers.put("Claim", Claim::fromJson);
    readers.put("ClaimAnswer", Claim.Answer::fromJson);
    readers.put("Report", Report::fromJson);
    readers.put("ReportAnswer", Report.Answer::fromJson);
    readers.put("Release", Release::fromJson);
    readers.put("ReleaseAnswer", Release.Answer::fromJson);
    readers.put("Run", Run::fromJson);
    readers.put("Stop", Stop::fromJson);
    readers.put("Logs", Logs::fromJson);
    readers.put("LogsAnswer", Logs.Answer::fromJson);
    readers.put("BindBatch", BindBatch::fromJson);
    readers.put("BindOutcomes", BindOutcomes::fromJson);
    readers.put("Kick", Kick::fromJson);
    readers.put("LeadershipChange", LeadershipChange::fromJson);
    return java.util.Collections.unmodifiableMap(readers);
  }
}
