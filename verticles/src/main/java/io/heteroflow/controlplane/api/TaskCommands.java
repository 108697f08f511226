package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.cluster.TaskStops;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import java.util.UUID;

/**
 * Submit and stop, the one code path behind REST ({@link TaskRoutes}) and the event-bus bridge
 * ({@link TaskCommandConsumers}): the same validation, authorisation, replies and refusals.
 */
final class TaskCommands {
  static final int MAX_IDEMPOTENCY_KEY = 128;
  /** The reason of a stop asked for here (replaces a pending task's last reason, e.g. InsufficientResources). */
  static final String STOPPED_BY_USER = "StoppedByUser";
  private final Vertx vertx;
  private final TaskStore tasks;
  private final QueueStore queues;
  private final TaskStops stops;
  private final int defaultTimeoutSeconds;
  private final ControlPlaneMetrics metrics;

  TaskCommands(Vertx vertx, TaskStore tasks, QueueStore queues, TaskStops stops, int defaultTimeoutSeconds,
               ControlPlaneMetrics metrics) {
    this.vertx = vertx;
    this.tasks = tasks;
    this.queues = queues;
    this.stops = stops;
    this.defaultTimeoutSeconds = defaultTimeoutSeconds;
    this.metrics = metrics;
  }

  /** A new task from a JSON body (201), or the one an earlier request with this idempotency key made (200). */
  Future<Reply> submit(Principal principal, Buffer body, String idempotencyKey) {
    TaskSpec spec = TaskSpecDecoder.decode(body, defaultTimeoutSeconds);
    if (idempotencyKey != null && (idempotencyKey.isBlank() || idempotencyKey.length() > MAX_IDEMPOTENCY_KEY)) {
      throw ApiError.badField("Idempotency-Key", "must be 1–" + MAX_IDEMPOTENCY_KEY + " characters");
    }
    principal.mayStartWork("a new task");
    return queues.list().map(tree -> spec.inQueue(QueueResolver.resolve(tree, principal,
            spec.queue(), spec.gpuRequired())))
        .compose(queued -> tasks.create(principal.tenant(), queued, idempotencyKey,
            ApiTokens.hex(sha256(body.getBytes()))))
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

  /** Stop (SPEC §7): pending → stopped at once; placed → stopping, and the agent is told (SIGTERM, grace, SIGKILL). */
  Future<Reply> stop(Principal principal, UUID id) {
    return visibleTask(principal, id).compose(task -> stop(task, 3));
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

  /** The task when {@code principal} may see it; 404 otherwise (also for another tenant's task). */
  Future<TaskRecord> visibleTask(Principal principal, UUID id) {
    return tasks.get(id).map(found -> found.filter(task -> principal.sees(task.tenant()))
        .orElseThrow(() -> ApiError.notFound("task " + id)));
  }

  private Future<TaskRecord> reload(UUID id) {
    return tasks.get(id).map(found -> found.orElseThrow(() -> ApiError.notFound("task " + id)));
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
