package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.store.Stores;
import io.heteroflow.controlplane.store.TenantStore;
import io.heteroflow.controlplane.cluster.TaskStops;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The control plane's router: the REST API ({@code /api/v1}, Bearer tokens), {@code /health/live},
 * {@code /health/ready} (alias {@code /health}), {@code /metrics}, the OpenAPI document and the static web UI.
 * The API's own composition: each route class gets from here only the stores it uses.
 */
public final class ApiRouter {
  public static final String OPENAPI_RESOURCE = "api/openapi.yaml";
  static final long BODY_LIMIT = 64 * 1024;
  private final String adminToken;
  private final SchedulerConfig config;
  private final Stores stores;
  private final Leadership leadership;
  private final PluginRegistry registry;
  private final ControlPlaneMetrics metrics;
  private final PrometheusMeterRegistry scrape;
  private final java.time.Clock clock;

  /** {@code clock}: the one the service beats read (a service's window state is shown by it). */
  public ApiRouter(String adminToken, SchedulerConfig config, Stores stores, Leadership leadership,
                   PluginRegistry registry, ControlPlaneMetrics metrics, PrometheusMeterRegistry scrape,
                   java.time.Clock clock) {
    this.clock = clock;
    this.adminToken = adminToken;
    this.config = config;
    this.stores = stores;
    this.leadership = leadership;
    this.registry = registry;
    this.metrics = metrics;
    this.scrape = scrape;
  }

  public Router create(Vertx vertx) {
    Router router = Router.router(vertx);
    String openapi = readResource(OPENAPI_RESOURCE);
    router.route().handler(RouteGuard.methods(router));
    new Health(stores.pool(), stores.leaders()).mount(router);
    router.get("/metrics").handler(ctx -> ctx.response()
        .putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
        .end(scrape.scrape()));
    router.get("/api/v1/openapi.yaml").handler(ctx -> ctx.response()
        .putHeader("content-type", "application/yaml").end(openapi));

    Router api = Router.router(vertx);
    api.route().handler(RouteGuard.api(api));
    api.route().handler(Http::jsonBodiesOnly);
    api.route().handler(BodyHandler.create(false).setBodyLimit(BODY_LIMIT));
    TenantStore tenants = stores.tenants();
    Tokens tokens = new Tokens(adminToken, tenants);
    RateLimiter limiter = new RateLimiter(config.api().rateLimits(), clock);
    api.route().handler(ctx -> authenticate(ctx, tokens, limiter));
    AuditTrail trail = new AuditTrail(clock, stores.audit());
    new ExplainRoutes(vertx, stores.nodes(), stores.preemptions(), stores.plugins(), stores.queues(), stores.plans(),
        registry, config, java.time.Clock.systemUTC()).mount(api);
    TaskStops stops = new TaskStops(vertx, stores.tasks());
    TaskCommands commands = new TaskCommands(vertx, stores.tasks(), stores.queues(), stops, config.defaultTaskTimeout(),
        metrics);
    new TaskRoutes(vertx, stores.tasks(), commands).mount(api);
    TaskCommandConsumers.register(vertx, commands);
    ServiceRoutes services = new ServiceRoutes(vertx, stores.services(), stores.queues(),
        stops, clock);
    new GroupRoutes(vertx, stores.groups(), stores.queues(), config.defaultTaskTimeout(), metrics, stores.services(),
        services).mount(api);
    new QueueRoutes(stores.queues(), trail).mount(api);
    new NodeRoutes(stores.nodes(), stores.tasks(), stops, trail).mount(api);
    new AdminRoutes(tenants, trail).mount(api);
    new TokenRoutes(stores.tokens(), stores.audit(), trail).mount(api);
    new PluginRoutes(vertx, stores.plugins(), registry, trail).mount(api);
    new ClusterRoutes(stores.leaders(), stores.nodes(), leadership).mount(api);
    api.route().failureHandler(Http::failure);
    router.route("/api/v1/*").subRouter(api);
    // below /api/ only the API answers, in JSON: never a static file or the HTML 404 of a missing one
    router.route("/api/*").handler(ctx -> ctx.fail(new ApiError(404, "not_found", null, "no such route: "
        + ctx.request().method() + " " + ctx.request().path())));

    router.route(EventBusBridge.PATH + "/*").subRouter(new EventBusBridge(vertx, tokens).router());
    router.route("/*").handler(StaticHandler.create("webroot").setCachingEnabled(false));
    router.route().failureHandler(Http::failure);
    return router;
  }

  /** Who the request is ({@link Tokens}), then the token's rate limit (the admin's only when not exempt). */
  private static void authenticate(RoutingContext ctx, Tokens tokens, RateLimiter limiter) {
    tokens.authenticate(ctx.request().getHeader("Authorization")).onComplete(result -> {
      if (result.failed()) {
        ctx.fail(result.cause());
        return;
      }
      Principal principal = result.result().principal();
      ctx.put(Http.PRINCIPAL, principal);
      if ((principal.admin() && limiter.limits().adminExempt())
          || withinLimit(ctx, limiter, result.result().tokenSha256())) {
        ctx.next();
      }
    });
  }

  /** Whether the token may make this request now; otherwise answers 429 with Retry-After (whole seconds). */
  private static boolean withinLimit(RoutingContext ctx, RateLimiter limiter, String key) {
    if (!limiter.limits().enabled()) {
      return true;
    }
    java.util.OptionalLong wait = limiter.acquire(key);
    if (wait.isEmpty()) {
      return true;
    }
    ctx.response().putHeader("Retry-After", String.valueOf(wait.getAsLong()));
    double rate = limiter.limits().requestsPerSecond();
    ctx.fail(new ApiError(429, "rate_limited", "api.rate_limits", "rate limit of this token exceeded: "
        + (rate == Math.rint(rate) ? String.valueOf((long) rate) : String.valueOf(rate)) + " requests per second, burst "
        + limiter.limits().burst() + " (api.rate_limits); retry after " + wait.getAsLong() + " s"));
    return false;
  }

  static String readResource(String name) {
    try (InputStream in = ApiRouter.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return Buffer.buffer(in.readAllBytes()).toString(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
