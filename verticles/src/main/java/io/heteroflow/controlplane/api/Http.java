package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.IllegalTransitionException;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VertxException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.pgclient.PgException;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one boundary where outcomes become HTTP: replies as JSON, refusals as 4xx with the field, a database
 * that cannot be reached as 503, anything else as 500 (logged, never a stack trace to the client).
 */
final class Http {
  private static final Logger LOG = Logger.getLogger(Http.class.getName());
  static final String PRINCIPAL = "heteroflow.principal";

  private Http() {}

  /** A reply: status and body (a JsonObject, JsonArray or String). */
  record Reply(int status, Object body) {
    static Reply ok(Object body) {
      return new Reply(200, body);
    }
  }

  static Handler<RoutingContext> handle(Function<RoutingContext, Future<Reply>> action) {
    return ctx -> {
      Future<Reply> reply;
      try {
        reply = action.apply(ctx);
      } catch (RuntimeException e) {
        reply = Future.failedFuture(e);
      }
      reply.onSuccess(r -> send(ctx, r)).onFailure(ctx::fail);
    };
  }

  /** {@code ?limit=}: given at most once, an integer between 1 and {@code max}; {@code fallback} when absent. */
  static int limit(RoutingContext ctx, int fallback, int max) {
    if (ctx.queryParams().getAll("limit").size() > 1) {
      throw ApiError.badField("limit", "must be given once");
    }
    String given = ctx.queryParams().get("limit");
    if (given == null) {
      return fallback;
    }
    int limit;
    try {
      limit = Integer.parseInt(given);
    } catch (NumberFormatException e) {
      throw ApiError.badField("limit", "must be an integer");
    }
    if (limit < 1 || limit > max) {
      throw ApiError.badField("limit", "must be between 1 and " + max);
    }
    return limit;
  }

  /** The {@code :id} path parameter as a UUID; anything else names no {@code what} there is (404). */
  static java.util.UUID idParam(RoutingContext ctx, String what) {
    try {
      return java.util.UUID.fromString(ctx.pathParam("id"));
    } catch (IllegalArgumentException e) {
      throw ApiError.notFound(what + " " + ctx.pathParam("id"));
    }
  }

  static Principal principal(RoutingContext ctx) {
    return ctx.get(PRINCIPAL);
  }

  /**
   * A request that carries a body must say it is JSON ({@code application/json}, or a {@code +json} type; any
   * parameters): otherwise 415 naming {@code Content-Type}, before the body is read. A form or text body is never
   * read as JSON.
   */
  static void jsonBodiesOnly(RoutingContext ctx) {
    String length = ctx.request().getHeader("Content-Length");
    boolean hasBody = ctx.request().getHeader("Transfer-Encoding") != null
        || (length != null && !length.trim().equals("0"));
    String type = ctx.request().getHeader("Content-Type");
    String media = type == null ? "" : type.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
    if (hasBody && !media.equals("application/json") && !(media.startsWith("application/") && media.endsWith("+json"))) {
      ctx.fail(new ApiError(415, "unsupported_media_type", "Content-Type", "Content-Type: a request body must be"
          + " JSON, sent with Content-Type: application/json (was " + (type == null ? "none"
          : "'" + StrictJson.printable(type) + "'") + ")"));
      return;
    }
    ctx.next();
  }

  static void requireAdmin(RoutingContext ctx) {
    if (!principal(ctx).admin()) {
      throw new ApiError(403, "forbidden", null, "this operation needs the admin token");
    }
  }

  static void send(RoutingContext ctx, Reply reply) {
    if (ctx.response().ended()) {
      return;
    }
    ctx.response().setStatusCode(reply.status());
    if (reply.body() instanceof String text) {
      end(ctx, "text/plain; charset=utf-8", text);
    } else {
      end(ctx, "application/json", String.valueOf(reply.body()));
    }
  }

  /** Ends with {@code body}; a HEAD gets its headers only (also over HTTP/2, where Vert.x would send the body). */
  private static void end(RoutingContext ctx, String contentType, String body) {
    ctx.response().putHeader("content-type", contentType);
    if (ctx.request().method() == HttpMethod.HEAD) {
      ctx.response().putHeader("content-length", String.valueOf(Buffer.buffer(body).length())).end();
    } else {
      ctx.response().end(body);
    }
  }

  /** Router failure handler: maps every failure to a status and a JSON error body. */
  static void failure(RoutingContext ctx) {
    Throwable failure = ctx.failure();
    ApiError error;
    if (failure instanceof ApiError api) {
      error = api;
    } else if (failure instanceof IllegalTransitionException illegal) {
      error = new ApiError(409, "illegal_transition", null, illegal.getMessage());
    } else if (failure == null) {
      error = switch (ctx.statusCode()) {
        case 413 -> new ApiError(413, "body_too_large", null, "the request body exceeds 64 KiB");
        case 404 -> new ApiError(404, "not_found", null, "no such route: " + ctx.request().path());
        case 405 -> new ApiError(405, "method_not_allowed", null, ctx.request().method() + " is not allowed here");
        default -> new ApiError(ctx.statusCode() >= 400 ? ctx.statusCode() : 500, "error", null, "request failed");
      };
    } else if (isDatabaseUnavailable(failure)) {
      error = new ApiError(503, "store_unavailable", null, "the database is unavailable, retry shortly");
    } else {
      LOG.log(Level.WARNING, "request " + ctx.request().method() + " " + ctx.request().path() + " failed", failure);
      error = new ApiError(500, "internal_error", null, "internal error");
    }
    sendError(ctx, error);
  }

  /** Renders a refusal as JSON (directly, where failing the context cannot be routed). */
  static void sendError(RoutingContext ctx, ApiError error) {
    if (!ctx.response().ended()) {
      ctx.response().setStatusCode(error.status());
      end(ctx, "application/json", error.toJson().encode());
    }
  }

  /**
   * Whether a failure (or any cause under it) says the database cannot be reached right now: a connection refused,
   * reset or closed under the query (an {@link java.io.IOException} or a Vert.x transport failure), or PostgreSQL's
   * own "connection exception" (08…), "operator intervention" (57P…: shutting down, starting up, in recovery) and
   * "insufficient resources" (53…: too many connections) classes. All of these are answered 503, to be retried.
   */
  static boolean isDatabaseUnavailable(Throwable failure) {
    for (Throwable each = failure; each != null; each = each.getCause() == each ? null : each.getCause()) {
      if (each instanceof PgException pg) {
        String state = pg.getSqlState();
        if (state != null && (state.startsWith("08") || state.startsWith("57P") || state.startsWith("53"))) {
          return true;
        }
      } else if (each instanceof VertxException || each instanceof java.io.IOException) {
        return true;
      }
    }
    return false;
  }
}
