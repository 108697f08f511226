package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Stop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.UUID;

/**
 * The two ways the control plane ends a task through the state machine, in one place for every caller (a user's
 * stop, a drain, a group stopping its members, a service removing or losing replicas, backlog recovery). Each is a
 * CAS from the state read: false when the task moved meanwhile.
 */
public final class TaskStops {
  private final Vertx vertx;
  private final TaskStore tasks;

  public TaskStops(Vertx vertx, TaskStore tasks) {
    this.vertx = vertx;
    this.tasks = tasks;
  }

  /**
   * The graceful stop: a pending task is stopped at once; a placed one becomes stopping and its agent is told
   * (SIGTERM, grace, SIGKILL; the agent confirms). False, changing nothing, from a state that cannot stop.
   */
  public Future<Boolean> stop(UUID id, TaskStatus from, String nodeId, TaskStore.Details why) {
    TaskStatus to = from == TaskStatus.PENDING ? TaskStatus.STOPPED : TaskStatus.STOPPING;
    if (!from.canBecome(to)) {
      return Future.succeededFuture(false);
    }
    return tasks.transition(id, from, to, why).onSuccess(won -> {
      if (won && to == TaskStatus.STOPPING && nodeId != null) {
        vertx.eventBus().send(BusAddresses.agentStop(nodeId), new Stop(id).toJson());
      }
    });
  }

  /**
   * A task whose node went offline, settled without its agent (reason {@code NodeLost}): running → failed (it is
   * lost), stopping → stopped, scheduled → pending (it never started).
   */
  public Future<Boolean> settleLost(UUID id, TaskStatus from, String message) {
    TaskStatus to = switch (from) {
      case RUNNING -> TaskStatus.FAILED;
      case STOPPING -> TaskStatus.STOPPED;
      default -> TaskStatus.PENDING;
    };
    return tasks.transition(id, from, to, new TaskStore.Details(null, null, "NodeLost", message));
  }
}
