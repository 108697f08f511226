package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code /api/v1/queues} and {@code /api/v1/gpu-equivalents} (SPEC §13): admins shape the queue tree and the card
 * model factors; anyone reads the queues they may use, with live usage in GPU-equivalents.
 */
final class QueueRoutes {
  private final QueueStore queues;

  private final AuditTrail trail;

  QueueRoutes(QueueStore queues, AuditTrail trail) {
    this.trail = trail;
    this.queues = queues;
  }

  void mount(Router api) {
    api.post("/queues").handler(Http.handle(ctx -> trail.after(ctx, "queue.create", "queues", write(ctx, null))));
    api.put("/queues/:name").handler(Http.handle(ctx -> trail.after(ctx, "queue.update",
        "queue/" + ctx.pathParam("name"), write(ctx, ctx.pathParam("name")))));
    api.delete("/queues/:name").handler(Http.handle(ctx -> trail.after(ctx, "queue.delete",
        "queue/" + ctx.pathParam("name"), delete(ctx))));
    api.get("/queues").handler(Http.handle(this::list));
    api.get("/gpu-equivalents").handler(Http.handle(ctx -> queues.gpuEquivalents()
        .map(factors -> Reply.ok(new JsonObject(new LinkedHashMap<>(factors))))));
    api.put("/gpu-equivalents").handler(Http.handle(ctx -> trail.after(ctx, "gpu_equivalents.set", "gpu-equivalents",
        setEquivalents(ctx))));
  }

  private Future<Reply> write(RoutingContext ctx, String name) {
    Http.requireAdmin(ctx);
    QueueRecord queue = QueueSpecDecoder.decode(ctx.body().buffer(), name);
    Future<java.util.Optional<QueueRecord>> written = name == null ? queues.create(queue) : queues.update(queue);
    return refusals(written.map(result -> {
      if (result.isEmpty()) {
        throw name == null ? new ApiError(409, "conflict", "name", "queue '" + queue.name() + "' already exists")
            : ApiError.notFound("queue " + name);
      }
      return new Reply(name == null ? 201 : 200, view(result.get(), QueueStore.Usage.NONE, QueueStore.Usage.NONE));
    }));
  }

  private Future<Reply> delete(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    String name = ctx.pathParam("name");
    return refusals(queues.delete(name).map(deleted -> {
      if (!deleted) {
        throw ApiError.notFound("queue " + name);
      }
      return Reply.ok(new JsonObject().put("deleted", name));
    }));
  }

  private Future<Reply> list(RoutingContext ctx) {
    Principal principal = Http.principal(ctx);
    return Future.all(queues.list(), queues.usage(), queues.borrowing()).map(all -> {
      List<QueueRecord> tree = all.resultAt(0);
      Map<String, QueueStore.Usage> own = all.resultAt(1);
      QueueStore.Borrowing borrowing = all.resultAt(2);
      Set<String> usable = QueueResolver.usable(tree, principal);
      JsonArray items = new JsonArray();
      for (QueueRecord queue : tree) {
        if (usable.contains(queue.name())) {
          items.add(view(queue, own.getOrDefault(queue.name(), QueueStore.Usage.NONE), QueueResolver.subtree(queue.name(),
              tree, own)).put("borrowed", round(borrowing.borrowed().getOrDefault(queue.name(), 0.0)))
              .put("lent", round(borrowing.lent().getOrDefault(queue.name(), 0.0))));
        }
      }
      return Reply.ok(new JsonObject().put("items", items).put("count", items.size()));
    });
  }

  private Future<Reply> setEquivalents(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), field -> true);
    Map<String, Double> factors = new LinkedHashMap<>();
    json.presentFields().forEach((model, value) -> {
      if (model.isBlank() || model.length() > 128) {
        throw ApiError.badField(model, "a card model is 1–128 characters");
      }
      if (!(value instanceof Number number) || number.doubleValue() <= 0 || number.doubleValue() > 100) {
        throw ApiError.badField(model, "must be a number above 0 and at most 100 (the card's GPU-equivalent)");
      }
      factors.put(model, number.doubleValue());
    });
    return queues.setGpuEquivalents(factors).map(v -> Reply.ok(new JsonObject(new LinkedHashMap<>(factors))));
  }

  /** A store refusal as the client's error: 409 for a conflict (not empty, root), else 400 naming the field. */
  private static Future<Reply> refusals(Future<Reply> reply) {
    return reply.recover(failure -> {
      if (failure instanceof QueueStore.Refused refused) {
        return Future.failedFuture(refused.conflict() ? new ApiError(409, "conflict", refused.field(), refused.getMessage())
            : ApiError.badField(refused.field(), refused.getMessage()));
      }
      return Future.failedFuture(failure);
    });
  }

  static JsonObject view(QueueRecord queue, QueueStore.Usage own, QueueStore.Usage subtree) {
    JsonObject caps = new JsonObject().put("max_cards_per_task", queue.maxCardsPerTask())
        .put("max_running", queue.maxRunning());
    return new JsonObject().put("name", queue.name()).put("parent", queue.parent()).put("weight", queue.weight())
        .put("guaranteed", queue.guaranteed()).put("max", queue.maxGpuEq()).put("caps", caps)
        .put("tenants", new JsonArray(queue.tenants()))
        .put("usage", new JsonObject().put("gpu_eq", round(subtree.gpuEq())).put("own_gpu_eq", round(own.gpuEq()))
            .put("active_tasks", subtree.active()).put("pending_tasks", subtree.pending())
            .put("running_tasks", subtree.running())
            .put("borrowed_gpu_eq", round(Math.max(0, subtree.gpuEq() - queue.guaranteed()))));
  }

  private static double round(double value) {
    return Math.round(value * 1000) / 1000.0;
  }
}
