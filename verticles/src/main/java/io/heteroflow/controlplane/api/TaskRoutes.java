package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/** {@code /api/v1/tasks}: submit, read, list, stop, logs, events. A tenant sees only its own tasks (404 otherwise). */
final class TaskRoutes {
  private static final long LOGS_TIMEOUT_MS = 3000;
  /** The reason of a stop asked for here (replaces a pending task's last reason, e.g. InsufficientResources). */
  static final String STOPPED_BY_USER = TaskCommands.STOPPED_BY_USER;
  private final Vertx vertx;
  private final TaskStore tasks;
  private final TaskCommands commands;

  TaskRoutes(Vertx vertx, TaskStore tasks, TaskCommands commands) {
    this.vertx = vertx;
    this.tasks = tasks;
    this.commands = commands;
  }

  void mount(Router api) {
    api.post("/tasks").handler(Http.handle(this::create));
    api.get("/tasks").putMetadata(RouteGuard.QUERY, List.of("status", "limit")).handler(Http.handle(this::list));
    api.get("/tasks/:id").handler(Http.handle(ctx -> visibleTask(ctx).map(task -> Reply.ok(TaskView.of(task)))));
    api.post("/tasks/:id/stop").handler(Http.handle(this::stop));
    api.get("/tasks/:id/logs").putMetadata(RouteGuard.QUERY, List.of(TaskLogStream.OFFSET, TaskLogStream.TAIL_BYTES))
        .handler(this::logs);
    api.get("/tasks/:id/events").handler(Http.handle(ctx -> visibleTask(ctx)
        .compose(task -> tasks.events(task.id())).map(Reply::ok)));
  }

  private Future<Reply> create(RoutingContext ctx) {
    return commands.submit(Http.principal(ctx), ctx.body().buffer(), ctx.request().getHeader("Idempotency-Key"));
  }

  private Future<Reply> list(RoutingContext ctx) {
    Principal principal = Http.principal(ctx);
    Set<TaskStatus> statuses = EnumSet.noneOf(TaskStatus.class);
    for (String statusParam : ctx.queryParams().getAll("status")) {
      for (String wire : statusParam.split(",", -1)) {
        statuses.add(status(wire.trim()));
      }
    }
    int limit = Http.limit(ctx, 100, 1000);
    return tasks.list(principal.admin() ? null : principal.tenant(), statuses, limit).map(tasks -> {
      JsonArray items = new JsonArray();
      tasks.forEach(task -> items.add(TaskView.of(task)));
      return Reply.ok(new JsonObject().put("items", items).put("count", items.size()));
    });
  }

  /** One wire status of {@code ?status=}; a 400 listing the valid ones otherwise. */
  private static TaskStatus status(String wire) {
    for (TaskStatus status : TaskStatus.values()) {
      if (status.wire().equals(wire)) {
        return status;
      }
    }
    throw ApiError.badField("status", "unknown status '" + StrictJson.printable(wire) + "'; valid: "
        + Arrays.stream(TaskStatus.values()).map(TaskStatus::wire).collect(Collectors.joining(", "))
        + " (several: status=pending,running)");
  }

  private Future<Reply> stop(RoutingContext ctx) {
    return commands.stop(Http.principal(ctx), Http.idParam(ctx, "task"));
  }

  /** Logs: streamed from the agent while it has them ({@link TaskLogStream}), else the tail kept at the end of the task. */
  private void logs(RoutingContext ctx) {
    Future<Void> streamed;
    try {
      Long offset = TaskLogStream.nonNegative(ctx, TaskLogStream.OFFSET);
      Long tailBytes = TaskLogStream.nonNegative(ctx, TaskLogStream.TAIL_BYTES);
      streamed = visibleTask(ctx).compose(task -> new TaskLogStream(vertx, LOGS_TIMEOUT_MS).stream(ctx, task.nodeId(),
          task.id(), offset, tailBytes, () -> tasks.logTail(task.id()).map(tail -> tail == null ? "" : tail)));
    } catch (RuntimeException e) {
      streamed = Future.failedFuture(e);
    }
    streamed.onFailure(ctx::fail);
  }

  private Future<TaskRecord> visibleTask(RoutingContext ctx) {
    return commands.visibleTask(Http.principal(ctx), Http.idParam(ctx, "task"));
  }
}
