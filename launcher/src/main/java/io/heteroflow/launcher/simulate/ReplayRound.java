package io.heteroflow.launcher.simulate;

import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner;
import io.heteroflow.controlplane.scheduler.gang.GangRequest;
import io.heteroflow.controlplane.scheduler.plan.FairShare;
import io.heteroflow.controlplane.scheduler.plan.ReservationPlanner;
import io.heteroflow.controlplane.scheduler.plan.Timeline;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One scheduling round of the replay under a queueing policy, through the scheduler's pipeline, gang planner,
 * fair-share order and reservation planner:
 * <ul>
 *   <li>{@code fifo}: one global queue in arrival order; the first job that cannot start ends the round
 *       (head-of-line blocking).</li>
 *   <li>{@code greedy}: arrival order, a job that cannot start is skipped; no reservations.</li>
 *   <li>{@code fair}: {@link FairShare} order between the queues; each queue strictly FIFO (a queue whose head
 *       cannot start starts nothing more this round); no reservations.</li>
 *   <li>{@code backfill}: fair-share order; first the {@link ReservationPlanner} plans the waiting work on a
 *       {@link Timeline} of the snapshot and the running jobs' ends, and its binding reservations go on the
 *       snapshot; then every job in order may start wherever the reservation filter lets it.</li>
 * </ul>
 * greedy and backfill try at most {@link #WINDOW} waiting jobs per round (the live round's batch of 200). The
 * reservations hold for the round that planned them (the simulator plans at the round's own time; the live
 * scheduler plans after a round for the next, a second later).
 */
final class ReplayRound {
  static final List<String> POLICIES = List.of("fifo", "greedy", "fair", "backfill");
  static final int WINDOW = 200;
  /** The live default of {@code queueing.reserve_after_seconds}. */
  static final Duration RESERVE_AFTER = Duration.ofSeconds(300);
  /** How many long waiters one round plans, oldest first (the live planner's 100 ms budget, made deterministic). */
  static final int PLAN_LIMIT = 4;

  private final String policy;
  private final ReplayCluster cluster;
  private final SchedulingPipeline pipeline;
  private final GangPlanner gangs;
  private final PluginSet plugins;
  /** The last plan's reservations and the jobs it planned, kept while nothing departs (see {@link #reserve}). */
  private io.heteroflow.controlplane.scheduler.plan.Reservations lastPlan;
  private List<java.util.UUID> lastPlanned = List.of();
  /** Whether something departed since the last plan (what starts is staged on its reservations, or changes its heads). */
  private boolean changedSincePlan = true;

  ReplayRound(String policy, ReplayCluster cluster, SchedulingPipeline pipeline, PluginSet plugins) {
    if (!POLICIES.contains(policy)) {
      throw new IllegalArgumentException("--policies: unknown policy '" + policy + "' (known: "
          + String.join(", ", POLICIES) + ")");
    }
    this.policy = policy;
    this.cluster = cluster;
    this.pipeline = pipeline;
    this.gangs = new GangPlanner(pipeline);
    this.plugins = plugins;
  }

  /**
   * Decides {@code pending} (arrival order) at {@code now}; only {@code candidates} are tried (the others could not
   * start at the last round and nothing has been freed since): answers the jobs that started, in order.
   */
  List<ReplayCluster.Started> run(long now, List<ReplayWorkload.Job> pending, Set<ReplayWorkload.Job> candidates) {
    boolean fairOrder = policy.equals("fair") || policy.equals("backfill");
    List<ReplayWorkload.Job> order = fairOrder ? FairShare.order(pending, ReplayWorkload.Job::queue,
        ReplayWorkload.Job::demand, ReplayWorkload.QUEUES, cluster.use(), cluster.total()) : pending;
    List<ReplayCluster.Started> started = new ArrayList<>();
    Map<List<Object>, Integer> failedFrom = new HashMap<>();
    switch (policy) {
      case "fifo" -> {
        for (ReplayWorkload.Job job : order) {
          if (!candidates.contains(job) || !start(now, job, started, failedFrom)) {
            break;
          }
        }
      }
      case "greedy" -> order.stream().filter(candidates::contains).limit(WINDOW)
          .forEach(job -> start(now, job, started, failedFrom));
      case "fair" -> {
        Set<String> blockedQueues = new HashSet<>();
        for (ReplayWorkload.Job job : order) {
          if (!blockedQueues.contains(job.queue())
              && (!candidates.contains(job) || !start(now, job, started, failedFrom))) {
            blockedQueues.add(job.queue());
          }
        }
      }
      default -> { // backfill
        if (candidates.size() == pending.size()) {
          changedSincePlan = true;
        }
        reserve(now, order);
        order.stream().filter(candidates::contains).limit(WINDOW).forEach(job -> start(now, job, started, failedFrom));
        cluster.snapshot().reserve(io.heteroflow.controlplane.scheduler.plan.Reservations.NONE);
      }
    }
    return started;
  }

  /**
   * Starts {@code job} if it fits now. {@code failedFrom}: per shape (runtime left out) and queue, the shortest runtime that
   * failed this round: the same shape with a runtime as long fails as well (capacity only shrinks within a round,
   * and a longer task crosses more reservations), so it is refused without asking the pipeline again.
   */
  private boolean start(long now, ReplayWorkload.Job job, List<ReplayCluster.Started> started,
                        Map<List<Object>, Integer> failedFrom) {
    List<ReplayCluster.Placement> placements = new ArrayList<>();
    if (job.gang()) {
      if (!cluster.mightFitGang(job.members())) {
        return false;
      }
      GangPlanner.GangDecision decision = gangs.decide(new GangRequest(job.id(), "trace", 50,
          Instant.ofEpochSecond(job.arrival()), null, null, job.members()), cluster.snapshot(), plugins);
      if (!decision.placed()) {
        return false;
      }
      decision.placements().forEach(p -> placements.add(new ReplayCluster.Placement(p.member(), p.decision())));
    } else {
      TaskRequest task = job.members().get(0);
      // within a queue (arrival order) a later job of the same shape and no shorter runtime is held off at least as
      // much: one that failed this round says the rest fail too
      List<Object> shape = List.of(task.shape().withTenure(0, 0, false), job.queue());
      if (failedFrom.getOrDefault(shape, Integer.MAX_VALUE) <= task.runtimeSeconds() || !cluster.mightFit(task)) {
        return false;
      }
      Decision decision = pipeline.decide(task, cluster.snapshot(), plugins);
      if (!decision.isPlaced()) {
        failedFrom.merge(shape, task.runtimeSeconds(), Math::min);
        return false;
      }
      cluster.snapshot().assume(task, decision);
      placements.add(new ReplayCluster.Placement(task, decision));
    }
    started.add(cluster.started(job, now, placements));
    return true;
  }

  /**
   * The round's binding reservations, planned as the live scheduler plans them after a round: the waiting work
   * that binds (the long waiters past {@link #RESERVE_AFTER}, oldest first, at most {@link #PLAN_LIMIT}, and the
   * first waiting job of each queue) on a timeline of the snapshot and the running jobs' expected ends.
   */
  private void reserve(long now, List<ReplayWorkload.Job> inFairOrder) {
    Instant at = Instant.ofEpochSecond(now);
    Set<ReplayWorkload.Job> binding = new LinkedHashSet<>();
    inFairOrder.stream().filter(job -> job.arrival() + RESERVE_AFTER.toSeconds() <= now)
        .sorted(java.util.Comparator.comparingLong(ReplayWorkload.Job::arrival)
            .thenComparingInt(ReplayWorkload.Job::index))
        .limit(PLAN_LIMIT).forEach(binding::add);
    Set<String> heads = new HashSet<>();
    inFairOrder.stream().filter(job -> heads.add(job.queue())).forEach(binding::add);
    List<ReservationPlanner.Waiting> waiting = new ArrayList<>();
    for (ReplayWorkload.Job job : inFairOrder) {
      if (binding.contains(job)) {
        waiting.add(new ReservationPlanner.Waiting(job.id(), job.gang(), job.name(), job.queue(),
            Instant.ofEpochSecond(job.arrival()), job.members().stream().map(this::member).toList(), true));
      }
    }
    List<java.util.UUID> planned = waiting.stream().map(ReservationPlanner.Waiting::id).toList();
    if (!changedSincePlan && lastPlan != null && planned.equals(lastPlanned)) {
      // nothing departed since the last plan and the same work binds: its slots stand (what started since either
      // leaves before a slot or was staged on its spare); only the round's time is new
      cluster.snapshot().reserve(lastPlan.at(at));
      return;
    }
    Timeline timeline = new Timeline(cluster.snapshot().nodeViews(), cluster.endings(), at);
    ReservationPlanner.Plan plan = ReservationPlanner.plan(waiting, timeline, RESERVE_AFTER, Duration.ofDays(1));
    cluster.snapshot().reserve(plan.reservations());
    lastPlan = plan.reservations();
    lastPlanned = planned;
    changedSincePlan = false;
  }

  /** The member with the nodes that could take it once freed (judged by its shape, as the live plan judges it). */
  private Timeline.Member member(TaskRequest task) {
    return new Timeline.Member(task, pipeline.feasibilityOfShape(task, cluster.snapshot(), plugins).eligibleOnceFreed());
  }
}
