package io.heteroflow.controlplane.api;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP server of the control plane. It listens first, before the database is migrated and the other
 * verticles are deployed, and answers every request from the start: {@code /health/live} 200, anything else
 * 503 {@code {"status":"starting"}} until the composition root {@link #serve serves} the full router (the REST API,
 * health, metrics, the web UI: {@link ApiRouter}). No connection accepted during start-up is left unanswered.
 *
 * <p>Slow clients are cut off: a connection silent for {@link Timeouts#idleMs} is closed (Vert.x idle timeout),
 * and a connection whose first request's headers are not complete within {@link Timeouts#headerReadMs} is closed
 * (a per-connection timer, cancelled when the request's headers have arrived). HTTP/2 clear-text (h2c) is off:
 * its protocol detection hands the connection over only once it has decided, which would hide it from the timer.
 */
public final class ApiVerticle extends VerticleBase {
  /** The idle timeout and the header-read timeout of the API server. */
  public record Timeouts(long idleMs, long headerReadMs) {
    public static final Timeouts DEFAULTS = new Timeouts(60_000, 10_000);

    public Timeouts {
      if (idleMs < 1 || headerReadMs < 1) {
        throw new IllegalArgumentException("HTTP timeouts must be positive, were " + idleMs + " and " + headerReadMs);
      }
    }
  }

  /** HTTPS: a PEM certificate (chain) file and its PEM key file (PKCS#8 or PKCS#1). */
  public record Tls(String certificateFile, String keyFile) {}

  /** The longest request line read (16 KiB): longer ids reach the router and are refused naming the field. */
  static final int MAX_REQUEST_LINE = 16 * 1024;

  private final String host;
  private final int port;
  private final Timeouts timeouts;
  private final Tls tls;
  /** Connections whose first request's headers are still awaited, with their header-read timer (event loop only). */
  private final Map<HttpConnection, Long> awaitingHeaders = new HashMap<>();
  private volatile HttpServer server;
  private volatile Router router;
  private volatile Handler<HttpServerRequest> handler = ApiVerticle::starting;

  public ApiVerticle(String host, int port, Timeouts timeouts) {
    this(host, port, timeouts, null);
  }

  /** With {@code tls} null the API speaks plain HTTP, else HTTPS only. */
  public ApiVerticle(String host, int port, Timeouts timeouts, Tls tls) {
    this.host = host;
    this.port = port;
    this.timeouts = timeouts;
    this.tls = tls;
  }

  @Override
  public Future<?> start() {
    HttpServerOptions options = new HttpServerOptions().setHost(host).setPort(port).setHttp2ClearTextEnabled(false)
        .setMaxInitialLineLength(MAX_REQUEST_LINE)
        .setIdleTimeout((int) Math.max(1, timeouts.idleMs())).setIdleTimeoutUnit(TimeUnit.MILLISECONDS);
    if (tls != null) {
      options.setSsl(true).setKeyCertOptions(new PemKeyCertOptions().setCertPath(tls.certificateFile())
          .setKeyPath(tls.keyFile()));
    }
    return vertx.createHttpServer(options).connectionHandler(this::awaitHeaders)
        .invalidRequestHandler(ApiVerticle::invalid)
        .requestHandler(request -> {
          headersArrived(request.connection());
          handler.handle(request);
        })
        .listen().onSuccess(s -> server = s);
  }

  private void awaitHeaders(HttpConnection connection) {
    long timer = vertx.setTimer(timeouts.headerReadMs(), id -> {
      awaitingHeaders.remove(connection);
      connection.close();
    });
    awaitingHeaders.put(connection, timer);
    connection.closeHandler(closed -> headersArrived(connection));
  }

  private void headersArrived(HttpConnection connection) {
    Long timer = awaitingHeaders.remove(connection);
    if (timer != null) {
      vertx.cancelTimer(timer);
    }
  }

  /** A request HTTP cannot decode (line or headers too long, malformed): a JSON error, then the connection closes. */
  private static void invalid(HttpServerRequest request) {
    Throwable cause = request.decoderResult().cause();
    String name = cause == null ? "" : cause.getClass().getSimpleName();
    int status = name.contains("TooLongHttpLine") ? 414 : name.contains("TooLongHttpHeader") ? 431 : 400;
    String body = new io.vertx.core.json.JsonObject().put("code", "invalid_request").putNull("field")
        .put("message", status == 414 ? "the request line is longer than " + MAX_REQUEST_LINE + " bytes"
            : status == 431 ? "the request headers are too large" : "not a valid HTTP request").encode();
    request.response().setStatusCode(status).putHeader("content-type", "application/json")
        .putHeader("connection", "close").end(body);
  }

  /** From now on every request goes to {@code router}. */
  public void serve(Router router) {
    this.router = router;
    this.handler = router;
  }

  /** The router served, or null while starting. */
  public Router router() {
    return router;
  }

  /** The actual port (useful when started on port 0). */
  public int actualPort() {
    return server.actualPort();
  }

  /** Before the router is served: alive, not ready, nothing else yet (a HEAD gets the headers only). */
  private static void starting(HttpServerRequest request) {
    boolean live = Health.LIVE.equals(request.path()) && (request.method() == HttpMethod.GET
        || request.method() == HttpMethod.HEAD);
    String body = (live ? Health.live() : Health.starting()).encode();
    request.response().setStatusCode(live ? 200 : 503).putHeader("content-type", "application/json");
    if (!live) {
      request.response().putHeader("Retry-After", "1");
    }
    if (request.method() == HttpMethod.HEAD) {
      request.response().putHeader("content-length", String.valueOf(Buffer.buffer(body).length())).end();
    } else {
      request.response().end(body);
    }
  }
}
