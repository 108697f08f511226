package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;

/**
 * A message of the bus protocol (docs/event-bus.md): a record with the one {@code toJson} of its type, read back
 * by the static {@code fromJson} of the same record. JSON stays the wire format, so an agent in another language
 * can speak it; every message carries the protocol version {@code v}.
 */
public interface BusMessage {
  /** The protocol version this build speaks and writes into every message as {@code v}. */
  int VERSION = 1;

  JsonObject toJson();

  /** A message's JSON with its version, for {@code toJson} to add its fields to. */
  static JsonObject envelope() {
    return new JsonObject().put("v", VERSION);
  }

  /**
   * The payload of a message, refused (400 naming {@code v}) when it speaks another version. A message without
   * {@code v} is read as version 1, the version of the messages from before the field existed.
   */
  static BusPayload versioned(JsonObject json) {
    BusPayload payload = BusPayload.of(json);
    Integer version = payload.optionalInteger("v");
    if (version != null && version != VERSION) {
      throw payload.bad("v", "protocol version " + VERSION + " is spoken here, got " + version);
    }
    return payload;
  }
}
