package io.heteroflow.controlplane.service;

import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Stop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.UUID;

/**
 * Ends replicas through the task state machine, as a user's stop does: a pending replica is stopped at once, a
 * placed one becomes stopping and its agent is told (the graceful stop: SIGTERM, grace, SIGKILL); a replica on an
 * offline node is settled as lost. Each is a CAS from the state read: false when it moved meanwhile.
 */
public final class ReplicaStops {
  private final Vertx vertx;
  private final TaskStore tasks;

  public ReplicaStops(Vertx vertx, TaskStore tasks) {
    this.vertx = vertx;
    this.tasks = tasks;
  }

  public Future<Boolean> stop(UUID id, TaskStatus from, String nodeId, String code, String message) {
    TaskStatus to = from == TaskStatus.PENDING ? TaskStatus.STOPPED : TaskStatus.STOPPING;
    if (!from.canBecome(to)) {
      return Future.succeededFuture(false);
    }
    return tasks.transition(id, from, to, new TaskStore.Details(null, null, code, message)).onSuccess(won -> {
      if (won && to == TaskStatus.STOPPING && nodeId != null) {
        vertx.eventBus().send(BusAddresses.agentStop(nodeId), new Stop(id).toJson());
      }
    });
  }

  /** A placed replica whose node went offline: a running one failed (NodeLost), a scheduled one back to pending. */
  public Future<Boolean> lose(UUID id, TaskStatus from, String nodeId) {
    TaskStatus to = from == TaskStatus.RUNNING ? TaskStatus.FAILED : TaskStatus.PENDING;
    return tasks.transition(id, from, to, new TaskStore.Details(null, null, "NodeLost",
        "its node " + nodeId + " went offline: the replica is rebuilt elsewhere"));
  }
}
