package io.heteroflow.agent.transport;

import io.heteroflow.protocol.message.BusMessage;
import io.heteroflow.protocol.message.BusPayload;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;
import java.util.function.Consumer;
import java.util.function.Function;

/** {@link AgentTransport} over the Vert.x event bus (local in dev, Hazelcast-clustered otherwise). */
public final class EventBusTransport implements AgentTransport {
  private final EventBus bus;
  private final DeliveryOptions options;

  public EventBusTransport(EventBus bus, long timeoutMs) {
    this.bus = bus;
    this.options = new DeliveryOptions().setSendTimeout(timeoutMs);
  }

  @Override
  public Future<JsonObject> request(String address, JsonObject body) {
    return bus.<JsonObject>request(address, body, options).map(reply -> reply.body());
  }

  /**
   * A malformed message (not a JSON object, a field of the wrong type) is refused with 400 and logged
   * (BusPayload). Completes when the consumer is registered (on a clustered bus: known to every member).
   */
  @Override
  public Future<Void> onMessage(String address, Consumer<JsonObject> handler) {
    return bus.consumer(address, message -> BusPayload.answer(message, json -> json, json -> {
      handler.accept(json);
      return Future.<BusMessage>succeededFuture();
    })).completion();
  }

  @Override
  public Future<Void> onRequest(String address, Function<JsonObject, Future<JsonObject>> handler) {
    return bus.consumer(address, message -> BusPayload.answer(message, json -> json,
        json -> handler.apply(json).map(reply -> (BusMessage) () -> reply))).completion();
  }
}
