package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.GroupStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.BusMessage;
import io.heteroflow.protocol.message.BusPayload;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.ArrayList;
import java.util.List;

/**
 * A task group's lifecycle (SPEC §9, leader only): every {@link #PERIOD_MS} and whenever a member moves or a stop
 * is asked for, each placed or stopping group is brought in line with its members, as PostgreSQL has them. Every
 * member running: the group runs. Every member succeeded: it succeeded. A member failed, was stopped or went back
 * to the queue (its node was lost before it started): the group is stopping, and every other member gets the
 * graceful stop. A group preempted (only ever as a whole) waits until every member has stopped, then goes back to
 * the queue as it is, without using a restart. Once every member has ended, a group with restarts left goes back to pending as a unit (a new
 * attempt of fresh members) and the others end failed or stopped. Each move is a CAS on the group's version, so two
 * leaders in turn, or a beat and a kick together, never apply one twice.
 */
public final class GroupLifecycleVerticle extends VerticleBase {
  public static final long PERIOD_MS = 2000;
  static final int BATCH = 500;
  static final String STOPPED_BY_GROUP = "GroupStopping";
  private final GroupStore groups;
  private final TaskStore tasks;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final long periodMs;
  private SerialPass pass;
  private TaskStops taskStops;

  public GroupLifecycleVerticle(GroupStore groups, TaskStore tasks, Leadership leadership, ControlPlaneMetrics metrics,
                                long periodMs) {
    this.groups = groups;
    this.tasks = tasks;
    this.leadership = leadership;
    this.metrics = metrics;
    this.periodMs = periodMs;
  }

  /** Completes once its kick consumer is registered. */
  @Override
  public Future<?> start() {
    taskStops = new TaskStops(vertx, tasks);
    pass = new SerialPass("group lifecycle sweep", leadership, this::sweep);
    vertx.setPeriodic(periodMs, id -> pass.request());
    return vertx.eventBus().consumer(BusAddresses.GROUPS_KICK, message -> BusPayload.answer(message, Kick::fromJson,
        kick -> {
          pass.request();
          return Future.<BusMessage>succeededFuture();
        })).completion();
  }

  /** One pass over the unfinished groups; answers how many moved. */
  public Future<Integer> sweep() {
    return groups.unfinished(BATCH).compose(unfinished -> {
      return SerialPass.changed(unfinished.stream().map(this::reconcile).toList());
    });
  }

  private Future<Boolean> reconcile(GroupStore.Group group) {
    GroupRecord record = group.group();
    List<TaskRecord> members = group.members();
    if (GroupRecord.STOPPING.equals(record.status())) {
      return stopMembers(record, members).compose(v -> {
        if (!members.stream().allMatch(member -> member.status().isTerminal())) {
          return Future.succeededFuture(false);
        }
        boolean restart = GroupRecord.FAILED.equals(record.ending()) && record.restartCount() < record.maxRestarts();
        if (restart) {
          return moved(groups.move(record, GroupRecord.PENDING, null, "GroupRestarted", "restart "
              + (record.restartCount() + 1) + " of " + record.maxRestarts() + " after: " + record.reasonMessage()), "restarted");
        }
        return moved(groups.move(record, record.ending(), null, null, null), null);
      });
    }
    if (members.stream().anyMatch(member -> member.status() == TaskStatus.PREEMPTING)) {
      return Future.succeededFuture(false); // preempted as a whole: wait until every member has stopped
    }
    if (members.stream().allMatch(GroupLifecycleVerticle::preempted)) {
      return moved(groups.requeuePreempted(record, "every member was preempted (a group is preempted only whole);"
          + " back in the queue as a unit"), "preempted");
    }
    TaskRecord broken = members.stream().filter(member -> member.status() == TaskStatus.FAILED
        || member.status() == TaskStatus.STOPPED || member.status() == TaskStatus.PENDING).findFirst().orElse(null);
    if (broken != null) {
      boolean byUser = broken.status() == TaskStatus.STOPPED && "StoppedByUser".equals(broken.reasonCode());
      String message = "rank " + broken.groupRank() + " (task " + broken.id() + ") " + broken.status().wire()
          + (broken.reasonCode() == null ? "" : " (" + broken.reasonCode() + ": " + broken.reasonMessage() + ")")
          + "; the other members are stopped";
      return moved(groups.move(record, GroupRecord.STOPPING, byUser ? GroupRecord.STOPPED : GroupRecord.FAILED,
          byUser ? "StoppedByUser" : "MemberFailed", message), null);
    }
    if (members.stream().allMatch(member -> member.status() == TaskStatus.SUCCEEDED)) {
      return moved(groups.move(record, GroupRecord.SUCCEEDED, null, null, null), null);
    }
    if (GroupRecord.SCHEDULED.equals(record.status()) && members.stream()
        .allMatch(member -> member.status() == TaskStatus.RUNNING || member.status() == TaskStatus.SUCCEEDED)) {
      return moved(groups.move(record, GroupRecord.RUNNING, null, null, null), null);
    }
    return Future.succeededFuture(false);
  }

  private static boolean preempted(TaskRecord member) {
    return member.status() == TaskStatus.PENDING
        && ("Preempted".equals(member.reasonCode()) || "PreemptionForced".equals(member.reasonCode()));
  }

  /** Every member still placed is told to stop (graceful: SIGTERM, grace, SIGKILL); a waiting one stops at once. */
  private Future<Void> stopMembers(GroupRecord group, List<TaskRecord> members) {
    List<Future<Boolean>> stops = new ArrayList<>();
    TaskStore.Details why = new TaskStore.Details(null, null, STOPPED_BY_GROUP, "group " + group.id() + " is stopping: "
        + group.reasonMessage());
    for (TaskRecord member : members) {
      TaskStatus status = member.status();
      if (status == TaskStatus.PENDING || status == TaskStatus.SCHEDULED || status == TaskStatus.RUNNING) {
        stops.add(taskStops.stop(member.id(), status, member.nodeId(), why));
      }
    }
    return Future.join(stops).mapEmpty();
  }

  /** A group move; a move that frees or asks for cards wakes the scheduler, and the next sweep follows at once. */
  private Future<Boolean> moved(Future<java.util.Optional<GroupRecord>> move, String requeuedAs) {
    return move.map(result -> {
      if (result.isPresent()) {
        pass.request(); // one more sweep after this one
        if (requeuedAs != null) {
          metrics.groups(requeuedAs);
        } else if (result.get().isFinished()) {
          metrics.groups(result.get().status());
        }
        if (requeuedAs != null || result.get().isFinished()) {
          vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("group moved").toJson());
        }
      }
      return result.isPresent();
    });
  }
}
