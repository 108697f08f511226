package io.heteroflow.controlplane.api;

import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Logs;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * {@code GET /tasks/:id/logs[?offset=N | ?tail_bytes=N]}: the task's log streamed from its agent, one bus answer
 * of at most {@link Logs#MAX_CHUNK_BYTES} per HTTP chunk, each asked for only once the previous one is written
 * (never the whole log in memory). The range ends where the log ended at the first answer. Headers:
 * {@code X-Log-Cap-Bytes} (what the agent keeps per task), {@code X-Log-Dropped-Bytes} (bytes gone from the front),
 * {@code X-Log-Offset} (the first byte sent, counted from the task's first byte), {@code X-Log-End}. When the agent
 * cannot answer or no longer has the log, the tail stored at the end of the task is sent with
 * {@code X-Log-Source: stored-tail}.
 */
final class TaskLogStream {
  static final String OFFSET = "offset";
  static final String TAIL_BYTES = "tail_bytes";
  private final Vertx vertx;
  private final long timeoutMs;

  TaskLogStream(Vertx vertx, long timeoutMs) {
    this.vertx = vertx;
    this.timeoutMs = timeoutMs;
  }

  /** {@code ?name=N}: given at most once, a whole number of 0 or more; null when absent. */
  static Long nonNegative(RoutingContext ctx, String name) {
    if (ctx.queryParams().getAll(name).size() > 1) {
      throw ApiError.badField(name, "must be given once");
    }
    String given = ctx.queryParams().get(name);
    if (given == null) {
      return null;
    }
    try {
      long value = Long.parseLong(given);
      if (value >= 0) {
        return value;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ApiError.badField(name, "a whole number of 0 or more is required");
  }

  /** Streams the log; completes when the response has ended (or failed before anything was sent). */
  Future<Void> stream(RoutingContext ctx, String nodeId, UUID taskId, Long offset, Long tailBytes,
                      Supplier<Future<String>> stored) {
    if (nodeId == null) {
      return storedTail(ctx, stored, tailBytes);
    }
    Long from = tailBytes != null ? null : offset == null ? 0L : offset; // 0: the first byte kept
    return ask(nodeId, new Logs(taskId, from, Logs.MAX_CHUNK_BYTES, tailBytes))
        .transform(first -> first.succeeded() && first.result().found()
            ? send(ctx, nodeId, first.result())
            : storedTail(ctx, stored, tailBytes));
  }

  private Future<Logs.Answer> ask(String nodeId, Logs request) {
    return vertx.eventBus().<JsonObject>request(BusAddresses.agentLogs(nodeId), request.toJson(),
            new DeliveryOptions().setSendTimeout(timeoutMs))
        .map(reply -> Logs.Answer.fromJson(reply.body()));
  }

  private Future<Void> send(RoutingContext ctx, String nodeId, Logs.Answer first) {
    HttpServerResponse response = ctx.response().setStatusCode(200)
        .putHeader("content-type", "text/plain; charset=utf-8")
        .putHeader("X-Log-Cap-Bytes", String.valueOf(first.capBytes()))
        .putHeader("X-Log-Dropped-Bytes", String.valueOf(first.droppedBytes()))
        .putHeader("X-Log-Offset", String.valueOf(first.offset()))
        .putHeader("X-Log-End", String.valueOf(first.end()));
    if (ctx.request().method() == HttpMethod.HEAD) {
      return response.end();
    }
    response.setChunked(true);
    return next(response, nodeId, first, first.end())
        .recover(broken -> {
          response.reset(); // the client sees a cut stream, never a short log presented as whole
          return Future.succeededFuture();
        });
  }

  /** Writes this chunk, then asks for the next one until {@code end}. */
  private Future<Void> next(HttpServerResponse response, String nodeId, Logs.Answer chunk, long end) {
    if (chunk.data().length == 0 || chunk.next() >= end) {
      return chunk.data().length == 0 ? response.end() : response.end(Buffer.buffer(chunk.data()));
    }
    int wanted = (int) Math.min(Logs.MAX_CHUNK_BYTES, end - chunk.next());
    return response.write(Buffer.buffer(chunk.data()))
        .compose(written -> ask(nodeId, new Logs(chunk.taskId(), chunk.next(), wanted, null)))
        .compose(answer -> next(response, nodeId, answer, end));
  }

  private static Future<Void> storedTail(RoutingContext ctx, Supplier<Future<String>> stored, Long tailBytes) {
    return stored.get().compose(text -> {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      int from = tailBytes == null ? 0 : (int) Math.max(0, bytes.length - Math.min(tailBytes, bytes.length));
      ctx.response().setStatusCode(200).putHeader("content-type", "text/plain; charset=utf-8")
          .putHeader("X-Log-Source", "stored-tail");
      Buffer body = Buffer.buffer(bytes).slice(from, bytes.length);
      return ctx.request().method() == HttpMethod.HEAD ? ctx.response().end() : ctx.response().end(body);
    });
  }
}
