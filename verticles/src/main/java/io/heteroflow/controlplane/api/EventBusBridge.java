package io.heteroflow.controlplane.api;

import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.bridge.BridgeEventType;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.sockjs.BridgeEvent;
import io.vertx.ext.web.handler.sockjs.SockJSBridgeOptions;
import io.vertx.ext.web.handler.sockjs.SockJSHandler;
import java.util.regex.Pattern;

/**
 * The SockJS event-bus bridge on the API port ({@code /eventbus}). Every send, publish and register frame carries the
 * caller's token in its headers ({@code headers.authorization: "Bearer <token>"}, the client's {@code defaultHeaders});
 * a frame without a valid one is refused. Inbound only {@link BusAddresses#API_TASKS_SUBMIT} and
 * {@link BusAddresses#API_TASKS_STOP}, with the client's headers replaced by the authenticated principal; outbound
 * only task events: a tenant registers its own {@code heteroflow.tenant.<name>.task-events}, the admin also
 * {@link BusAddresses#ADMIN_TASK_EVENTS}.
 */
final class EventBusBridge {
  static final String PATH = "/eventbus";
  private static final Pattern TENANT_EVENTS = Pattern.compile("heteroflow\\.tenant\\.[^.]+\\.task-events");
  private final Vertx vertx;
  private final Tokens tokens;

  EventBusBridge(Vertx vertx, Tokens tokens) {
    this.vertx = vertx;
    this.tokens = tokens;
  }

  Router router() {
    SockJSBridgeOptions options = new SockJSBridgeOptions()
        .addInboundPermitted(new PermittedOptions().setAddress(BusAddresses.API_TASKS_SUBMIT))
        .addInboundPermitted(new PermittedOptions().setAddress(BusAddresses.API_TASKS_STOP))
        .addOutboundPermitted(new PermittedOptions().setAddressRegex(TENANT_EVENTS.pattern()))
        .addOutboundPermitted(new PermittedOptions().setAddress(BusAddresses.ADMIN_TASK_EVENTS))
        .setReplyTimeout(30_000);
    return SockJSHandler.create(vertx).bridge(options, this::check);
  }

  private void check(BridgeEvent event) {
    BridgeEventType type = event.type();
    if (type != BridgeEventType.SEND && type != BridgeEventType.PUBLISH && type != BridgeEventType.REGISTER) {
      event.complete(true); // socket created/closed, ping, unregister, a message to the client (already permitted)
      return;
    }
    JsonObject frame = event.getRawMessage();
    JsonObject headers = frame == null ? null : frame.getJsonObject("headers");
    Object authorization = headers == null ? null : headers.getValue("authorization");
    Future<Principal> principal = authorization instanceof String value ? tokens.ofAuthorization(value)
        : Future.failedFuture(new ApiError(401, "unauthorized", "headers.authorization",
            "every frame must carry headers.authorization: \"Bearer <token>\""));
    principal.map(caller -> allowed(type, frame, headers, caller)).onComplete(result ->
        event.complete(result.succeeded() && result.result()));
  }

  private static boolean allowed(BridgeEventType type, JsonObject frame, JsonObject headers, Principal caller) {
    String address = frame.getString("address");
    if (type == BridgeEventType.REGISTER) {
      return BusAddresses.tenantTaskEvents(caller.tenant()).equals(address)
          || (caller.admin() && (BusAddresses.ADMIN_TASK_EVENTS.equals(address) || TENANT_EVENTS.matcher(
              address == null ? "" : address).matches()));
    }
    // a command: only the bridge's own headers go on (the principal), and the idempotency key the client may give
    JsonObject trusted = new JsonObject().put(TaskCommandConsumers.PRINCIPAL_HEADER,
        TaskCommandConsumers.principalHeader(caller));
    if (headers.getValue(TaskCommandConsumers.IDEMPOTENCY_KEY_HEADER) instanceof String key) {
      trusted.put(TaskCommandConsumers.IDEMPOTENCY_KEY_HEADER, key);
    }
    frame.put("headers", trusted);
    return type == BridgeEventType.SEND;
  }
}
