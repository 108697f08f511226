package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.controlplane.cluster.TaskStops;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
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
import java.util.UUID;
import java.util.stream.Collectors;

/** {@code /api/v1/tasks}: submit, read, list, stop, logs, events. A tenant sees only its own tasks (404 otherwise). */
final class TaskRoutes {
  private static final int MAX_IDEMPOTENCY_KEY = 128;
  private static final long LOGS_TIMEOUT_MS = 3000;
  /** The reason of a stop asked for here (replaces a pending task's last reason, e.g. InsufficientResources). */
  static final String STOPPED_BY_USER = "StoppedByUser";
  private final Vertx vertx;
  private final TaskStore tasks;
  private final QueueStore queues;
  private final TaskStops stops;
  private final int defaultTimeoutSeconds;
  private final ControlPlaneMetrics metrics;

  TaskRoutes(Vertx vertx, TaskStore tasks, QueueStore queues, TaskStops stops, int defaultTimeoutSeconds,
             ControlPlaneMetrics metrics) {
    this.vertx = vertx;
    this.tasks = tasks;
    this.queues = queues;
    this.stops = stops;
    this.defaultTimeoutSeconds = defaultTimeoutSeconds;
    this.metrics = metrics;
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
    TaskSpec spec = TaskSpecDecoder.decode(ctx.body().buffer(), defaultTimeoutSeconds);
    String key = ctx.request().getHeader("Idempotency-Key");
    if (key != null && (key.isBlank() || key.length() > MAX_IDEMPOTENCY_KEY)) {
      throw ApiError.badField("Idempotency-Key", "must be 1–" + MAX_IDEMPOTENCY_KEY + " characters");
    }
    Principal principal = Http.principal(ctx);
    principal.mayStartWork("a new task");
    return queues.list().map(tree -> spec.inQueue(QueueResolver.resolve(tree, principal,
            spec.queue(), spec.gpuRequired())))
        .compose(queued -> tasks.create(principal.tenant(), queued, key, sha256(ctx.body().buffer().getBytes())))
        .map(created -> {
      if (created.keyReusedWithOtherBody()) {
        throw new ApiError(422, "idempotency_key_reused", "Idempotency-Key",
            "Idempotency-Key was already used for a different request body");
      }
      if (created.created()) {
        metrics.taskCreated();
        vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.task(created.task().id()).toJson());
      }
      return new Reply(created.created() ? 201 : 200, TaskView.of(created.task()));
    });
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

  /** Stop (SPEC §7): pending → stopped at once; placed → stopping, and the agent is told (SIGTERM, grace, SIGKILL). */
  private Future<Reply> stop(RoutingContext ctx) {
    return visibleTask(ctx).compose(task -> stop(task, 3));
  }

  private Future<Reply> stop(TaskRecord task, int attemptsLeft) {
    TaskStatus from = task.status();
    if (task.groupId() != null && !from.isTerminal()) {
      throw new ApiError(409, "group_member", null, "task " + task.id() + " is rank " + task.groupRank() + " of group "
          + task.groupId() + ": a group stops as a whole (POST /api/v1/groups/" + task.groupId() + "/stop)")
          .withCurrentStatus(from.wire());
    }
    if (from == TaskStatus.STOPPING) {
      return Future.succeededFuture(new Reply(202, TaskView.of(task)));
    }
    if (from.isTerminal()) {
      throw new ApiError(409, "illegal_transition", null, "task is already " + from.wire() + "; it cannot be stopped")
          .withCurrentStatus(from.wire());
    }
    return stops.stop(task.id(), from, task.nodeId(), new TaskStore.Details(null, null, STOPPED_BY_USER,
            "stopped by user"))
        .compose(won -> {
          if (!won) {
            if (attemptsLeft == 0) {
              throw ApiError.conflict("the task kept changing state; retry");
            }
            return reload(task.id()).compose(fresh -> stop(fresh, attemptsLeft - 1));
          }
          return reload(task.id()).map(fresh -> new Reply(202, TaskView.of(fresh)));
        });
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
    UUID id = Http.idParam(ctx, "task");
    Principal principal = Http.principal(ctx);
    return tasks.get(id).map(found -> found.filter(task -> principal.sees(task.tenant()))
        .orElseThrow(() -> ApiError.notFound("task " + id)));
  }

  private Future<TaskRecord> reload(UUID id) {
    return tasks.get(id).map(found -> found.orElseThrow(() -> ApiError.notFound("task " + id)));
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
