package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.UUID;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@link BusAddresses#API_TASKS_SUBMIT} and {@link BusAddresses#API_TASKS_STOP}: {@link TaskCommands} on the bus, for
 * the clients of the {@link EventBusBridge}. Local consumers only, so only this process's bridge reaches them (a
 * cluster member cannot forge the principal header). The reply is the REST body with header {@code status} (201,
 * 200, 202); a refusal fails the message with the HTTP status as failure code and the REST error JSON as message.
 */
final class TaskCommandConsumers {
  /** Message header the bridge sets (never the client): the authenticated principal as JSON. */
  static final String PRINCIPAL_HEADER = "heteroflow-principal";
  /** Message header a client may send: the REST {@code Idempotency-Key}. */
  static final String IDEMPOTENCY_KEY_HEADER = "idempotency-key";
  private static final Logger LOG = Logger.getLogger(TaskCommandConsumers.class.getName());

  private TaskCommandConsumers() {}

  static void register(Vertx vertx, TaskCommands commands) {
    vertx.eventBus().<Object>localConsumer(BusAddresses.API_TASKS_SUBMIT, message -> answer(message, principal ->
        commands.submit(principal, body(message.body()), message.headers().get(IDEMPOTENCY_KEY_HEADER))));
    vertx.eventBus().<Object>localConsumer(BusAddresses.API_TASKS_STOP, message -> answer(message, principal ->
        commands.stop(principal, taskId(message.body()))));
  }

  private static void answer(Message<Object> message, Function<Principal, Future<Reply>> action) {
    Future<Reply> reply;
    try {
      reply = action.apply(principal(message));
    } catch (RuntimeException e) {
      reply = Future.failedFuture(e);
    }
    reply.onSuccess(done -> message.reply(done.body(), new DeliveryOptions()
            .addHeader("status", String.valueOf(done.status()))))
        .onFailure(failure -> {
          ApiError error = asApiError(failure);
          message.fail(error.status(), error.toJson().encode());
        });
  }

  static Principal principal(Message<?> message) {
    String header = message.headers().get(PRINCIPAL_HEADER);
    if (header == null) {
      throw new ApiError(401, "unauthorized", null, "no authenticated principal on the message");
    }
    JsonObject json = new JsonObject(header);
    return new Principal(json.getBoolean("admin"), json.getString("tenant"), json.getBoolean("active"));
  }

  static String principalHeader(Principal principal) {
    return new JsonObject().put("admin", principal.admin()).put("tenant", principal.tenant())
        .put("active", principal.active()).encode();
  }

  /** The REST body: the client sends a JSON object (or its text); anything else is decoded, and refused, as text. */
  private static Buffer body(Object body) {
    if (body instanceof JsonObject json) {
      return json.toBuffer();
    }
    if (body == null) {
      throw new ApiError(400, "invalid_body", null, "the message body must be a JSON object (the task)");
    }
    return Buffer.buffer(String.valueOf(body));
  }

  private static UUID taskId(Object body) {
    if (!(body instanceof JsonObject json) || !(json.getValue("id") instanceof String id)) {
      throw ApiError.badField("id", "must be the task id, a string");
    }
    try {
      return UUID.fromString(id);
    } catch (IllegalArgumentException e) {
      throw ApiError.notFound("task " + StrictJson.printable(id));
    }
  }

  private static ApiError asApiError(Throwable failure) {
    if (failure instanceof ApiError api) {
      return api;
    }
    if (failure instanceof io.heteroflow.controlplane.store.IllegalTransitionException illegal) {
      return new ApiError(409, "illegal_transition", null, illegal.getMessage());
    }
    if (Http.isDatabaseUnavailable(failure)) {
      return new ApiError(503, "store_unavailable", null, "the database is unavailable, retry shortly");
    }
    LOG.log(Level.WARNING, "bus command failed", failure);
    return new ApiError(500, "internal_error", null, "internal error");
  }
}
