package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Logs;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HexFormat;
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
    api.get("/tasks/:id/logs").handler(Http.handle(this::logs));
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

  /** Logs: from the agent while it can answer, else the tail kept at the end of the task. */
  private Future<Reply> logs(RoutingContext ctx) {
    return visibleTask(ctx).compose(task -> {
      Future<String> stored = tasks.logTail(task.id()).map(tail -> tail == null ? "" : tail);
      if (task.nodeId() == null || task.status().isTerminal()) {
        return stored.map(Reply::ok);
      }
      JsonObject request = new Logs(task.id(), Logs.DEFAULT_MAX_BYTES).toJson();
      return vertx.eventBus().<JsonObject>request(BusAddresses.agentLogs(task.nodeId()), request,
              new DeliveryOptions().setSendTimeout(LOGS_TIMEOUT_MS))
          .map(reply -> Reply.ok(Logs.Answer.fromJson(reply.body()).text()))
          .recover(unreachable -> stored.map(Reply::ok));
    });
  }

  private Future<TaskRecord> visibleTask(RoutingContext ctx) {
    return commands.visibleTask(Http.principal(ctx), Http.idParam(ctx, "task"));
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String sha256(String text) {
    return sha256(text.getBytes(StandardCharsets.UTF_8));
  }
}
