package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.scheduler.BindDispatcher.Decided;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.Feasibility;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plan.Ending;
import io.heteroflow.controlplane.scheduler.plan.Estimate;
import io.heteroflow.controlplane.scheduler.plan.FairShare;
import io.heteroflow.controlplane.scheduler.plan.ReservationPlanner;
import io.heteroflow.controlplane.scheduler.plan.Timeline;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.PlanStore;
import io.heteroflow.controlplane.scheduler.plan.Reservations;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The round's reservations and estimates (SPEC §13): after the round has decided, every task and group that could
 * not start for lack of capacity is planned on a {@link Timeline} of the snapshot and the active tasks' expected
 * ends ({@link ReservationPlanner}); the binding reservations go on the snapshot for the next round's decisions
 * (the reservation filter), and the estimates are written where they changed. A plan is made at most every
 * {@link #PLAN_EVERY}; the ends are read at most every {@link #ENDINGS_MAX_AGE}, and the placements this leader
 * staged since then are added from their requests.
 */
final class Reserving {
  static final Duration ENDINGS_MAX_AGE = Duration.ofSeconds(2);
  /**
   * A new plan at most this often: rounds run back to back while a queue drains, and a plan of many waiting tasks
   * costs up to {@link #PLAN_BUDGET}; between plans the last one's reservations stand (at the round's time).
   */
  static final Duration PLAN_EVERY = Duration.ofSeconds(1);
  static final Duration PLAN_BUDGET = Duration.ofMillis(100);
  /** A staged placement is kept this long: past any read that could have missed its bind. */
  static final Duration STAGED_KEPT = Duration.ofSeconds(15);

  /** Refusals that only what runs now causes: a reservation due now still holds for them. */
  private static final java.util.Set<ReasonCode> WAITS_FOR_CAPACITY = java.util.EnumSet.of(
      ReasonCode.InsufficientResources, ReasonCode.Reserved);
  private static final Logger LOG = Logger.getLogger(Reserving.class.getName());
  private final PlanStore store;
  private final SchedulingPipeline pipeline;
  private final Clock clock;
  private final Duration reserveAfter;
  private List<Ending> endings = List.of();
  private Instant endingsRead;
  private Instant planned;
  private final Map<UUID, Staged> stagedSinceRead = new LinkedHashMap<>();

  private record Staged(Instant stagedAt, Ending ending) {
  }

  Reserving(PlanStore store, SchedulingPipeline pipeline, Clock clock, Duration reserveAfter) {
    this.store = store;
    this.pipeline = pipeline;
    this.clock = clock;
    this.reserveAfter = reserveAfter;
  }

  /** One piece of the round's work in decision order: a task or a group, with what was decided. */
  record Work(Decided task, GangScheduling.Gang group) {
    String queue() {
      return task != null ? task.task().queue() : group.group().group().queue();
    }

    /** What it asks for, before it is placed (a group: all its members). */
    FairShare.Amount demand() {
      if (task != null) {
        return FairShareOrder.demand(task.task());
      }
      return group.group().members().stream().map(FairShareOrder::demand)
          .reduce(FairShare.Amount.NONE, FairShare.Amount::plus);
    }
  }

  /**
   * After the round's decisions: plans its waiting work on a worker and puts the binding reservations on the
   * snapshot (none when nothing waits); the estimates are written without holding the round up.
   */
  Future<Void> round(Vertx vertx, List<Work> inOrder, Snapshot snapshot, PluginSet plugins) {
    if (inOrder.stream().noneMatch(Reserving::waits)) {
      if (!snapshot.reservations().all().isEmpty()) {
        snapshot.reserve(Reservations.NONE);
      }
      return Future.succeededFuture();
    }
    Instant now = clock.instant();
    if (planned != null && planned.plus(PLAN_EVERY).isAfter(now)) {
      snapshot.reserve(snapshot.reservations().at(now));
      return Future.succeededFuture();
    }
    planned = now;
    return refresh().compose(v -> vertx.executeBlocking(() -> plan(inOrder, snapshot, plugins), true)).map(plan -> {
      record(plan).onFailure(e -> LOG.log(Level.WARNING, "recording the estimates failed; the next round writes them", e));
      return null;
    });
  }

  private static boolean waits(Work work) {
    return work.task() != null ? !work.task().decision().isPlaced()
        : work.group().decision() != null && !work.group().decision().placed();
  }

  /** Reads the active tasks' expected ends when the last read is older than {@link #ENDINGS_MAX_AGE}. */
  private Future<Void> refresh() {
    Instant now = clock.instant();
    if (endingsRead != null && endingsRead.plus(ENDINGS_MAX_AGE).isAfter(now)) {
      return Future.succeededFuture();
    }
    return store.activeEndings().map(read -> {
      endings = read;
      endingsRead = now;
      // a placement staged before this read may have been bound after it: kept a while longer, not dropped
      stagedSinceRead.values().removeIf(staged -> staged.stagedAt().plus(STAGED_KEPT).isBefore(now));
      return null;
    });
  }

  /** A placement staged this round: it frees what it takes after its runtime. */
  void staged(TaskRequest task, Decision placed) {
    Instant now = clock.instant();
    stagedSinceRead.put(task.id(), new Staged(now, new Ending(placed.nodeId(), task.runtimeSeconds() > 0
        ? now.plusSeconds(task.runtimeSeconds()) : Instant.MAX, placed.gpuIndices(),
        placed.shard() == null ? null : placed.shard().cardIndex(), task.cpuCores(), task.memoryMb())));
  }

  /**
   * Plans the round's waiting work (worker thread), puts the binding reservations on the snapshot, and answers
   * the estimates to write.
   */
  private ReservationPlanner.Plan plan(List<Work> inOrder, Snapshot snapshot, PluginSet plugins) {
    List<ReservationPlanner.Waiting> waiting = new ArrayList<>();
    List<Estimate> unknownTasks = new ArrayList<>();
    List<Estimate> unknownGroups = new ArrayList<>();
    for (Work work : inOrder) {
      if (work.task() != null) {
        Decision decision = work.task().decision();
        if (decision.isPlaced() || decision.nominates()) {
          continue;
        }
        if (!Feasibility.CAPACITY.contains(decision.code())) {
          unknownTasks.add(new Estimate(work.task().task().id(), null, why(decision.code())));
          continue;
        }
        TaskRequest request = work.task().request();
        waiting.add(new ReservationPlanner.Waiting(request.id(), false, "task " + work.task().task().name(),
            work.task().task().queue(), request.queuedSince(), List.of(member(request, snapshot, plugins)),
            WAITS_FOR_CAPACITY.contains(decision.code())));
      } else if (work.group().decision() != null && !work.group().decision().placed()) {
        GroupRecord group = work.group().group().group();
        ReasonCode code = work.group().decision().code();
        if (code != ReasonCode.GangIncomplete && !Feasibility.CAPACITY.contains(code)) {
          unknownGroups.add(new Estimate(group.id(), null, why(code)));
          continue;
        }
        waiting.add(new ReservationPlanner.Waiting(group.id(), true, "group " + group.name(), group.queue(),
            group.createdAt().toInstant(), work.group().request().members().stream()
                .map(member -> member(member, snapshot, plugins)).toList(), true));
      }
    }
    List<Ending> known = new ArrayList<>(endings);
    stagedSinceRead.values().forEach(staged -> known.add(staged.ending()));
    Timeline timeline = new Timeline(snapshot.nodeViews(), known, clock.instant());
    ReservationPlanner.Plan plan = ReservationPlanner.plan(waiting, timeline, reserveAfter, PLAN_BUDGET);
    snapshot.reserve(plan.reservations());
    unknownTasks.addAll(plan.tasks());
    unknownGroups.addAll(plan.groups());
    return new ReservationPlanner.Plan(unknownTasks, unknownGroups, plan.reservations());
  }

  private Future<Void> record(ReservationPlanner.Plan plan) {
    return Future.all(store.setTaskEstimates(plan.tasks()), store.setGroupEstimates(plan.groups())).mapEmpty();
  }

  private Timeline.Member member(TaskRequest task, Snapshot snapshot, PluginSet plugins) {
    return new Timeline.Member(task, pipeline.feasibilityOfShape(task, snapshot, plugins).eligibleOnceFreed());
  }

  private static String why(ReasonCode code) {
    return code == ReasonCode.QuotaExceeded ? "cannot be known: it waits for its queue's quota, not for capacity"
        : "cannot be known: no node could take it as the fleet is (" + code + ")";
  }
}
