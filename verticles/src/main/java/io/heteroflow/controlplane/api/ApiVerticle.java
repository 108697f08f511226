package io.heteroflow.controlplane.api;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;

/**
 * The HTTP server of the control plane. It listens first, before the database is migrated and the other
 * verticles are deployed, and answers every request from the start: {@code /health/live} 200, anything else
 * 503 {@code {"status":"starting"}} until the composition root {@link #serve serves} the full router (the REST API,
 * health, metrics, the web UI: {@link ApiRouter}). No connection accepted during start-up is left unanswered.
 */
public final class ApiVerticle extends VerticleBase {
  private final String host;
  private final int port;
  private volatile HttpServer server;
  private volatile Router router;
  private volatile Handler<HttpServerRequest> handler = ApiVerticle::starting;

  public ApiVerticle(String host, int port) {
    this.host = host;
    this.port = port;
  }

  @Override
  public Future<?> start() {
    return vertx.createHttpServer().requestHandler(request -> handler.handle(request)).listen(port, host)
        .onSuccess(s -> server = s);
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
