package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.controlplane.store.LeaderStore;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;

/**
 * {@code /health/live}: the process is up (200 whenever HTTP answers). {@code /health/ready} (and its alias
 * {@code /health}): 200 when this control plane can serve: PostgreSQL answers a {@code SELECT 1}, every verticle
 * is deployed with its bus consumers registered (the router is served only then; before, {@link ApiVerticle}
 * answers 503 "starting"), and some member holds a valid leader term. Otherwise 503
 * {@code {"ready":false,"waiting_for":[…]}} naming what is missing. GET and HEAD on each (load balancers).
 */
final class Health {
  static final String LIVE = "/health/live";
  static final String READY = "/health/ready";
  /** The single health route of earlier releases: now the readiness check. */
  static final String ALIAS = "/health";
  /** A check that takes longer than this counts as failed: a probe is answered quickly. */
  static final long CHECK_TIMEOUT_MS = 2000;
  private final Pool pool;
  private final LeaderStore leaders;

  Health(Pool pool, LeaderStore leaders) {
    this.pool = pool;
    this.leaders = leaders;
  }

  static JsonObject live() {
    return new JsonObject().put("status", "UP");
  }

  /** What a request gets before the router is served. */
  static JsonObject starting() {
    return new JsonObject().put("status", "starting").put("ready", false)
        .put("waiting_for", new JsonArray().add("verticles"));
  }

  void mount(Router router) {
    Handler<RoutingContext> live = Http.handle(ctx -> Future.succeededFuture(Reply.ok(live())));
    Handler<RoutingContext> ready = Http.handle(ctx -> ready());
    router.get(LIVE).handler(live);
    router.head(LIVE).handler(live);
    for (String path : new String[] {READY, ALIAS}) {
      router.get(path).handler(ready);
      router.head(path).handler(ready);
    }
  }

  /** Both checks run at once; neither fails the reply: a failed or slow check is named in waiting_for. */
  Future<Reply> ready() {
    Future<Boolean> database = Database.ping(pool).map(true).timeout(CHECK_TIMEOUT_MS, TimeUnit.MILLISECONDS)
        .otherwise(false);
    Future<Boolean> leader = leaders.leaderKnown().timeout(CHECK_TIMEOUT_MS, TimeUnit.MILLISECONDS).otherwise(false);
    return Future.all(database, leader).map(both -> {
      JsonArray waiting = new JsonArray();
      if (!database.result()) {
        waiting.add("database");
      }
      if (!leader.result()) {
        waiting.add("leader");
      }
      if (waiting.isEmpty()) {
        return Reply.ok(new JsonObject().put("status", "UP").put("ready", true).put("database", "UP"));
      }
      return new Reply(503, new JsonObject().put("status", "DOWN").put("ready", false).put("waiting_for", waiting));
    });
  }
}
