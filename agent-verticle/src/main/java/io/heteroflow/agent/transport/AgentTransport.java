package io.heteroflow.agent.transport;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The only way the agent speaks to the control plane: JSON messages on the addresses of BusAddresses. Today
 * the clustered event bus ({@link EventBusTransport}) or, for fleets of thousands, the control planes' TCP event-bus
 * bridges ({@link BridgeTransport}), without touching detection or execution.
 */
public interface AgentTransport {
  /** Request-reply; fails on timeout or when the receiver fails the message. */
  Future<JsonObject> request(String address, JsonObject body);

  /** Fire-and-forget messages sent to this agent; completes once the control plane can reach the handler. */
  Future<Void> onMessage(String address, Consumer<JsonObject> handler);

  /**
   * Requests sent to this agent; the handler's future is the reply. Completes once the control plane can reach
   * the handler.
   */
  Future<Void> onRequest(String address, Function<JsonObject, Future<JsonObject>> handler);

  /** Lets go of the connection for good when the agent stops (no reconnect); nothing to do on the event bus. */
  default Future<Void> close() {
    return Future.succeededFuture();
  }
}
