package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.scheduler.framework.Fragmentation;
import io.heteroflow.controlplane.store.CardCounts;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** {@code /api/v1/nodes}: the fleet as PostgreSQL knows it; admins set location (region/zone/rack) and labels. */
final class NodeRoutes {
  private static final Pattern LOCATION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
  private final Services services;

  NodeRoutes(Services services) {
    this.services = services;
  }

  void mount(Router api) {
    api.get("/nodes").handler(Http.handle(ctx -> services.nodes().all().map(nodes -> {
      JsonArray items = new JsonArray();
      nodes.forEach(node -> items.add(node.toJson()));
      return Reply.ok(new JsonObject().put("items", items).put("count", items.size()));
    })));
    api.get("/nodes/:id").handler(Http.handle(ctx -> services.nodes().get(ctx.pathParam("id"))
        .map(node -> Reply.ok(node.orElseThrow(() -> ApiError.notFound("node " + ctx.pathParam("id"))).toJson()))));
    api.get("/fragmentation").handler(Http.handle(ctx -> services.nodes().cardCounts().map(counts -> {
      Fragmentation fragmentation = CardCounts.fragmentation(counts);
      JsonObject histogram = new JsonObject();
      fragmentation.freeCardsPerNode().forEach((free, count) -> histogram.put(String.valueOf(free), count));
      return Reply.ok(new JsonObject().put("free_cards_per_node", histogram)
          .put("whole_free_nodes", fragmentation.wholeFreeNodes())
          .put("largest_placeable_task", fragmentation.largestPlaceableTask())
          .put("free_cards", fragmentation.freeCards()).put("total_cards", fragmentation.totalCards()));
    })));
    api.put("/nodes/:id/location").handler(Http.handle(this::setLocation));
    api.put("/nodes/:id/labels").handler(Http.handle(this::setLabels));
  }

  private Future<Reply> setLocation(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("region", "zone", "rack"));
    String region = json.string("region", null, 63, LOCATION);
    String zone = json.string("zone", null, 63, LOCATION);
    String rack = json.string("rack", null, 63, LOCATION);
    String id = ctx.pathParam("id");
    return services.nodes().setLocation(id, region, zone, rack).compose(found -> reply(found, id));
  }

  private Future<Reply> setLabels(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("labels"));
    if (!json.has("labels")) {
      throw ApiError.badField("labels", "is required");
    }
    Map<String, String> labels = json.stringMap("labels", 64, TaskSpecDecoder.LABEL_KEY, 256);
    String id = ctx.pathParam("id");
    return services.nodes().setLabels(id, new JsonObject(Map.copyOf(labels))).compose(found -> reply(found, id));
  }

  private Future<Reply> reply(boolean found, String id) {
    if (!found) {
      throw ApiError.notFound("node " + id);
    }
    return services.nodes().get(id).map(node -> Reply.ok(node.orElseThrow().toJson()));
  }
}
