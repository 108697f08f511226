package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner.GangDecision;
import io.heteroflow.controlplane.scheduler.gang.GangRequest;
import io.heteroflow.controlplane.scheduler.gang.GroupPath;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.GroupStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Run;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The scheduling round's share for task groups (SPEC §9): reads up to {@link #BATCH} pending groups in queue order
 * (a cursor carries on in the next round), decides each as one unit with the {@link GangPlanner} on the round's
 * snapshot (in queue order among the round's single tasks, so a placed group is staged before the tasks behind
 * it), and binds each placed group in its own all-or-nothing transaction ({@link GroupStore#bind}). A group that
 * cannot be completed holds nothing and records its reason on the group and every member.
 */
final class GangScheduling {
  static final int BATCH = 20;
  /** Past this many group binds in flight a round waits for them before it ends. */
  static final int MAX_BINDS_IN_FLIGHT = 2 * BATCH;
  private static final Logger LOG = Logger.getLogger(GangScheduling.class.getName());

  /** A pending group, its members as requests in rank order, and what the round decided for it. */
  record Gang(GroupStore.Group group, GangRequest request, GangDecision decision) {
    Gang decided(GangDecision decision) {
      return new Gang(group, request, decision);
    }
  }

  private final Vertx vertx;
  private final GroupStore groups;
  private final GangPlanner planner;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final SnapshotCache snapshots;
  private final Runnable retry;
  private GroupStore.Cursor cursor;
  /** Groups whose bind is in flight: still pending in PostgreSQL meanwhile, so the next round must not take them. */
  private final Set<java.util.UUID> binding = new java.util.HashSet<>();
  /** Groups whose bind settled since the current read began: that read may still show them pending. */
  private final Set<java.util.UUID> settledSinceRead = new java.util.HashSet<>();
  private final List<Future<Void>> inFlight = new ArrayList<>();

  GangScheduling(Vertx vertx, GroupStore groups, GangPlanner planner, Leadership leadership,
                 ControlPlaneMetrics metrics, SnapshotCache snapshots, Runnable retry) {
    this.vertx = vertx;
    this.groups = groups;
    this.planner = planner;
    this.leadership = leadership;
    this.metrics = metrics;
    this.snapshots = snapshots;
    this.retry = retry;
  }

  /** This round's pending groups whose members all wait and none is binding ({@link #more} says if more are queued). */
  Future<List<Gang>> read() {
    settledSinceRead.clear();
    return groups.pending(cursor, BATCH).map(read -> {
      GroupRecord last = read.isEmpty() ? null : read.get(read.size() - 1).group();
      cursor = read.size() < BATCH || last == null ? null
          : new GroupStore.Cursor(last.priority(), last.createdAt(), last.id());
      return read.stream()
          .filter(group -> !binding.contains(group.group().id()) && !settledSinceRead.contains(group.group().id()))
          .filter(group -> group.members().size() == group.group().memberCount()
              && group.members().stream().allMatch(member -> member.status() == TaskStatus.PENDING))
          .map(group -> new Gang(group, request(group), null)).toList();
    });
  }

  /** Whether the last read stopped short of the queue's tail (another round should follow). */
  boolean more() {
    return cursor != null;
  }

  private static GangRequest request(GroupStore.Group group) {
    GroupRecord record = group.group();
    List<TaskRequest> members = group.members().stream().map(TaskRecord::toRequest).toList();
    return new GangRequest(record.id(), record.tenant(), record.priority(), record.createdAt().toInstant(),
        record.gpuType(), record.parallelism(), members);
  }

  /** Decides one group on the snapshot (worker thread); a placed group is staged there. */
  Gang decide(Gang gang, Snapshot snapshot, PluginSet plugins, QuotaGate quotas) {
    long started = System.nanoTime();
    GroupRecord group = gang.group().group();
    int cards = gang.request().members().stream().mapToInt(TaskRequest::gpuRequired).sum();
    String blocked = quotas.blocked(group.queue(), cards);
    GangDecision decision = blocked != null
        ? new GangDecision(GroupPath.of(group.parallelism(), gang.request().members()), List.of(),
            ReasonCode.QuotaExceeded, blocked, List.of())
        : planner.decide(gang.request(), snapshot, plugins);
    if (blocked == null && decision.placed()) {
      double need = decision.placements().stream().mapToDouble(each -> quotas.need(each.decision(), snapshot)).sum();
      String over = quotas.admit(group.queue(), need, decision.placements().size());
      if (over != null) {
        GangPlanner.undo(decision, snapshot);
        decision = decision.refused(ReasonCode.QuotaExceeded, over);
      }
    }
    metrics.groupDecision(java.time.Duration.ofNanos(System.nanoTime() - started));
    return gang.decided(decision);
  }

  /**
   * Starts the placed groups' binds (each its own transaction) and records why the others wait. The round does
   * not wait for the binds — the next one decides meanwhile, skipping the groups in flight, whose nodes keep their
   * staged view — unless {@link #MAX_BINDS_IN_FLIGHT} are in flight: then it waits for them (backpressure).
   */
  Future<Void> settle(List<Gang> decided) {
    LeaderStore.Fence fence = leadership.fence();
    List<Future<Void>> settled = new ArrayList<>();
    for (Gang gang : decided) {
      GangDecision decision = gang.decision();
      if (!decision.placed()) {
        metrics.groups("incomplete");
        metrics.attempt("unschedulable", decision.code().name());
        settled.add(groups.setReason(gang.group().group().id(), decision.code().name(), decision.message()));
      } else if (fence != null) {
        Future<Void> bound = bind(gang, fence).recover(e -> {
          LOG.log(Level.WARNING, "binding task group " + gang.group().group().id() + " failed", e);
          return Future.succeededFuture();
        });
        inFlight.add(bound);
        bound.onComplete(done -> inFlight.remove(bound));
      }
    }
    if (inFlight.size() >= MAX_BINDS_IN_FLIGHT) {
      settled.addAll(inFlight);
    }
    if (fence == null && decided.stream().anyMatch(gang -> gang.decision().placed())) {
      snapshots.reset(); // staged groups that will never bind
    }
    return Future.join(settled).<Void>mapEmpty().recover(e -> {
      LOG.log(Level.WARNING, "settling task groups failed", e);
      return Future.succeededFuture();
    });
  }

  private Future<Void> bind(Gang gang, LeaderStore.Fence fence) {
    List<GangPlanner.Placement> placements = gang.decision().placements();
    List<BindStore.Request> requests = placements.stream().map(each -> new BindStore.Request(each.member().id(),
        each.decision().nodeId(), each.decision().gpuIndices(), each.decision().shard())).toList();
    Set<String> nodes = new LinkedHashSet<>();
    requests.forEach(request -> nodes.add(request.nodeId()));
    nodes.forEach(snapshots::staged);
    GroupRecord group = gang.group().group();
    binding.add(group.id());
    return groups.bind(group, requests, fence).onComplete(done -> {
      binding.remove(group.id());
      settledSinceRead.add(group.id());
    }).compose(bound -> {
      nodes.forEach(node -> snapshots.settled(node, bound.bound() ? bound.nodeVersions().get(node) : null));
      if (bound.fenced()) {
        leadership.stepDown();
        return Future.<Void>succeededFuture();
      }
      if (!bound.bound()) {
        retry.run();
        if (bound.lostClaim()) {
          return Future.<Void>succeededFuture();
        }
        metrics.groups("rolled_back");
        metrics.attempt("rolled_back", bound.code().name());
        return groups.setReason(group.id(), bound.code().name(), bound.message());
      }
      metrics.groups("placed");
      for (int rank = 0; rank < requests.size(); rank++) {
        send(gang, requests, rank, bound, fence);
      }
      return Future.<Void>succeededFuture();
    }, failure -> {
      nodes.forEach(node -> snapshots.settled(node, null));
      retry.run();
      return Future.failedFuture(failure);
    });
  }

  private void send(Gang gang, List<BindStore.Request> requests, int rank, GroupStore.Bound bound,
                    LeaderStore.Fence fence) {
    BindStore.Request request = requests.get(rank);
    TaskRecord member = gang.group().members().stream().filter(task -> task.id().equals(request.taskId()))
        .findFirst().orElseThrow();
    BindStore.Outcome outcome = bound.members().get(rank);
    Run.Distributed world = new Run.Distributed(gang.group().group().id(), requests.size(), rank, bound.masterAddr(),
        bound.masterPort(), bound.backend());
    metrics.attempt("bound", null);
    metrics.bound(java.time.Duration.between(member.createdAt().toInstant(), java.time.Instant.now()), member.queue());
    vertx.eventBus().send(BusAddresses.agentRun(request.nodeId()), member.run(request.gpuIndices(),
        request.shard() == null ? null : request.shard().toWire(), outcome.hostPort(), outcome.masterPort(),
        fence.term(), world).toJson());
  }
}
