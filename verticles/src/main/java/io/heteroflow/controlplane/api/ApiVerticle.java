package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.store.Database;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** The REST API ({@code /api/v1}), {@code /health}, {@code /metrics} and the static web UI. */
public final class ApiVerticle extends VerticleBase {
  public static final String OPENAPI_RESOURCE = "api/openapi.yaml";
  static final long BODY_LIMIT = 64 * 1024;
  private final Services services;
  private final String host;
  private final int port;
  private HttpServer server;

  public ApiVerticle(Services services, String host, int port) {
    this.services = services;
    this.host = host;
    this.port = port;
  }

  @Override
  public Future<?> start() {
    Router router = router();
    return vertx.createHttpServer().requestHandler(router).listen(port, host).onSuccess(s -> server = s);
  }

  /** The actual port (useful when started on port 0). */
  public int actualPort() {
    return server.actualPort();
  }

  public Router router() {
    Router router = Router.router(vertx);
    String openapi = readResource(OPENAPI_RESOURCE);
    router.route().handler(RouteGuard.methods(router));
    Handler<RoutingContext> health = Http.handle(ctx -> Database.ping(services.pool())
        .map(ok -> Http.Reply.ok(new JsonObject().put("status", "UP").put("database", "UP"))));
    router.get("/health").handler(health);
    router.head("/health").handler(health);
    router.get("/metrics").handler(ctx -> ctx.response()
        .putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
        .end(services.meterRegistry().scrape()));
    router.get("/api/v1/openapi.yaml").handler(ctx -> ctx.response()
        .putHeader("content-type", "application/yaml").end(openapi));

    Router api = Router.router(vertx);
    api.route().handler(RouteGuard.api(api));
    api.route().handler(BodyHandler.create(false).setBodyLimit(BODY_LIMIT));
    api.route().handler(this::authenticate);
    new TaskRoutes(vertx, services).mount(api);
    new NodeRoutes(services).mount(api);
    new AdminRoutes(services).mount(api);
    new PluginRoutes(vertx, services).mount(api);
    new ClusterRoutes(services).mount(api);
    api.route().failureHandler(Http::failure);
    router.route("/api/v1/*").subRouter(api);

    router.route("/*").handler(StaticHandler.create("webroot").setCachingEnabled(false));
    router.route().failureHandler(Http::failure);
    return router;
  }

  private void authenticate(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    if (header == null || !header.startsWith("Bearer ") || header.length() <= 7) {
      ctx.fail(new ApiError(401, "unauthorized", null, "missing 'Authorization: Bearer <token>' header"));
      return;
    }
    String token = header.substring(7).trim();
    if (MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
        services.adminToken().getBytes(StandardCharsets.UTF_8))) {
      ctx.put(Http.PRINCIPAL, Principal.ofAdmin());
      ctx.next();
      return;
    }
    services.tenants().tenantOfToken(TaskRoutes.sha256(token)).onComplete(result -> {
      if (result.failed()) {
        ctx.fail(result.cause());
      } else if (result.result().isEmpty()) {
        ctx.fail(new ApiError(401, "unauthorized", null, "unknown token"));
      } else {
        ctx.put(Http.PRINCIPAL, Principal.ofTenant(result.result().get()));
        ctx.next();
      }
    });
  }

  static String readResource(String name) {
    try (InputStream in = ApiVerticle.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return Buffer.buffer(in.readAllBytes()).toString(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
