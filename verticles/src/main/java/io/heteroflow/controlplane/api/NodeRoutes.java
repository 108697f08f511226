package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.scheduler.framework.Fragmentation;
import io.heteroflow.controlplane.store.CardCounts;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.controlplane.cluster.TaskStops;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * {@code /api/v1/nodes}: the fleet as PostgreSQL knows it; admins set location (region/zone/rack) and labels,
 * cordon, uncordon and drain nodes and set their dedicated tenant. Also {@code /api/v1/whoami}.
 */
final class NodeRoutes {
  private static final Pattern LOCATION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
  private static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  private final NodeStore nodes;
  private final TaskStore tasks;
  private final TaskStops stops;

  private final AuditTrail trail;

  NodeRoutes(NodeStore nodes, TaskStore tasks, TaskStops stops, AuditTrail trail) {
    this.trail = trail;
    this.nodes = nodes;
    this.tasks = tasks;
    this.stops = stops;
  }

  void mount(Router api) {
    api.get("/nodes").handler(Http.handle(ctx -> nodes.all().map(nodes -> {
      JsonArray items = new JsonArray();
      nodes.forEach(node -> items.add(node.toJson()));
      return Reply.ok(new JsonObject().put("items", items).put("count", items.size()));
    })));
    api.get("/nodes/:id").handler(Http.handle(ctx -> nodes.get(ctx.pathParam("id"))
        .map(node -> Reply.ok(node.orElseThrow(() -> ApiError.notFound("node " + ctx.pathParam("id"))).toJson()))));
    api.get("/fragmentation").handler(Http.handle(ctx -> nodes.cardCounts().map(counts -> {
      Fragmentation fragmentation = CardCounts.fragmentation(counts);
      JsonObject histogram = new JsonObject();
      fragmentation.freeCardsPerNode().forEach((free, count) -> histogram.put(String.valueOf(free), count));
      return Reply.ok(new JsonObject().put("free_cards_per_node", histogram)
          .put("whole_free_nodes", fragmentation.wholeFreeNodes())
          .put("largest_placeable_task", fragmentation.largestPlaceableTask())
          .put("free_cards", fragmentation.freeCards()).put("total_cards", fragmentation.totalCards()));
    })));
    api.put("/nodes/:id/location").handler(Http.handle(ctx -> trail.after(ctx, "node.location", "node/" + ctx.pathParam("id"),
        setLocation(ctx))));
    api.put("/nodes/:id/labels").handler(Http.handle(ctx -> trail.after(ctx, "node.labels", "node/" + ctx.pathParam("id"),
        setLabels(ctx))));
    api.post("/nodes/:id/cordon").handler(Http.handle(ctx -> trail.after(ctx, "node.cordon",
        "node/" + ctx.pathParam("id"), cordon(ctx, true))));
    api.post("/nodes/:id/uncordon").handler(Http.handle(ctx -> trail.after(ctx, "node.uncordon",
        "node/" + ctx.pathParam("id"), cordon(ctx, false))));
    api.post("/nodes/:id/drain").putMetadata(RouteGuard.QUERY, List.of("wait")).handler(Http.handle(ctx ->
        trail.after(ctx, "node.drain", "node/" + ctx.pathParam("id"), drain(ctx))));
    api.put("/nodes/:id/dedicated").handler(Http.handle(ctx -> trail.after(ctx, "node.dedicated", "node/" + ctx.pathParam("id"),
        setDedicated(ctx))));
    // who the caller is, for the console (it hides admin forms from tenant tokens)
    api.get("/whoami").handler(Http.handle(ctx -> {
      Principal principal = Http.principal(ctx);
      return Future.succeededFuture(Reply.ok(new JsonObject().put("tenant", principal.tenant())
          .put("admin", principal.admin())));
    }));
  }

  private Future<Reply> cordon(RoutingContext ctx, boolean cordoned) {
    Http.requireAdmin(ctx);
    String id = ctx.pathParam("id");
    return nodes.setCordon(id, cordoned, false).compose(found -> reply(found, id));
  }

  /**
   * Drain: cordon, then stop every scheduled or running task on the node as a user's stop does (stopping;
   * the agent sends SIGTERM, then SIGKILL after the grace). With {@code wait=true} the tasks are left to finish.
   */
  private Future<Reply> drain(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    String waitParam = ctx.queryParams().get("wait");
    if (waitParam != null && !waitParam.equals("true") && !waitParam.equals("false")) {
      throw ApiError.badField("wait", "must be true or false");
    }
    boolean wait = "true".equals(waitParam);
    String id = ctx.pathParam("id");
    return nodes.setCordon(id, true, true).compose(found -> {
      if (!found) {
        throw ApiError.notFound("node " + id);
      }
      if (wait) {
        return Future.succeededFuture();
      }
      return nodes.activeTasks(id).compose(tasks -> {
        List<Future<Void>> stops = new ArrayList<>();
        tasks.forEach((task, status) -> stops.add(stop(id, task, status, 3)));
        return Future.all(stops).mapEmpty();
      });
    }).compose(stopped -> reply(true, id));
  }

  /** One task of a drained node to stopping (a lost race re-reads it and tries again), and its agent told. */
  private Future<Void> stop(String nodeId, UUID task, TaskStatus from, int attemptsLeft) {
    if (from != TaskStatus.SCHEDULED && from != TaskStatus.RUNNING) {
      return Future.succeededFuture(); // already stopping, preempting or finished
    }
    TaskStore.Details details = new TaskStore.Details(null, null, null, "stopped by drain of node " + nodeId);
    return stops.stop(task, from, nodeId, details).compose(won -> {
      if (won) {
        return Future.succeededFuture();
      }
      if (attemptsLeft == 0) {
        return Future.succeededFuture();
      }
      return tasks.get(task).compose(fresh -> fresh.isEmpty() || !nodeId.equals(fresh.get().nodeId())
          ? Future.succeededFuture() : stop(nodeId, task, fresh.get().status(), attemptsLeft - 1));
    });
  }

  private Future<Reply> setDedicated(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("tenant"));
    if (!ctx.body().asJsonObject().containsKey("tenant")) {
      throw ApiError.badField("tenant", "is required (a tenant name, or null for none)");
    }
    String tenant = json.string("tenant", null, 63, TENANT);
    String id = ctx.pathParam("id");
    return nodes.setDedicated(id, tenant).compose(outcome -> switch (outcome) {
      case UNKNOWN_TENANT -> throw ApiError.badField("tenant", "unknown tenant '" + tenant + "'");
      case UNKNOWN_NODE -> reply(false, id);
      case SET -> reply(true, id);
    });
  }

  private Future<Reply> setLocation(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("region", "zone", "rack"));
    String region = json.string("region", null, 63, LOCATION);
    String zone = json.string("zone", null, 63, LOCATION);
    String rack = json.string("rack", null, 63, LOCATION);
    String id = ctx.pathParam("id");
    return nodes.setLocation(id, region, zone, rack).compose(found -> reply(found, id));
  }

  private Future<Reply> setLabels(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("labels"));
    if (!json.has("labels")) {
      throw ApiError.badField("labels", "is required");
    }
    Map<String, String> labels = json.stringMap("labels", 64, TaskSpecDecoder.LABEL_KEY, 256);
    String id = ctx.pathParam("id");
    return nodes.setLabels(id, new JsonObject(Map.copyOf(labels))).compose(found -> reply(found, id));
  }

  private Future<Reply> reply(boolean found, String id) {
    if (!found) {
      throw ApiError.notFound("node " + id);
    }
    return nodes.get(id).map(node -> Reply.ok(node.orElseThrow().toJson()));
  }
}
