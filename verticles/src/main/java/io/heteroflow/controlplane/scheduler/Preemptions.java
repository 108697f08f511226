package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.scheduler.BindDispatcher.Decided;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.Nomination;
import io.heteroflow.controlplane.scheduler.framework.Occupants;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.PreemptionStore;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Stop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * The preemption step of a round (SPEC §6). When a PostFilter plugin asked for the nodes' active tasks while the
 * round decided a task no node took, they are read once for the whole round ({@link PreemptionStore#occupants}),
 * and those tasks are decided again with them, in queue order, each plan staged on the snapshot so the next one
 * neither counts on the same victims nor takes the nominated node. Each plan is then carried out in its own
 * transaction under the leader's fence (victims to preempting, preemptor nominated, or nothing), and the victims'
 * agents are told to stop them — the heartbeat reconciliation repeats it for an agent that missed the message.
 */
final class Preemptions {
  private static final Logger LOG = Logger.getLogger(Preemptions.class.getName());
  static final String NONE_SUFFICIENT = " Preemption cannot help: no node would fit it even without every task it"
      + " may preempt.";

  private final Vertx vertx;
  private final PreemptionStore store;
  private final TaskStore tasks;
  private final SchedulingPipeline pipeline;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final Reclaims reclaims = new Reclaims();
  /** The preempt watchdog's timeout, which a nomination's term counts on (60 s by default). */
  private final int watchdogSeconds;

  Preemptions(Vertx vertx, PreemptionStore store, TaskStore tasks, SchedulingPipeline pipeline, Leadership leadership,
              ControlPlaneMetrics metrics, int watchdogSeconds) {
    this.vertx = vertx;
    this.store = store;
    this.tasks = tasks;
    this.pipeline = pipeline;
    this.leadership = leadership;
    this.metrics = metrics;
    this.watchdogSeconds = watchdogSeconds;
  }

  /** The round's decisions, those that wanted the nodes' occupants decided again with them (on a worker). */
  Future<List<Decided>> replan(List<Decided> decided, Snapshot snapshot, PluginSet plugins) {
    Occupants occupants = snapshot.occupants();
    List<TaskRequest> wanted = List.copyOf(occupants.wanted());
    if (wanted.isEmpty()) {
      return Future.succeededFuture(decided);
    }
    int highest = wanted.stream().mapToInt(TaskRequest::priority).max().orElse(0);
    Set<UUID> again = wanted.stream().map(TaskRequest::id).collect(Collectors.toSet());
    Set<String> reclaimFrom = reclaims.note(decided, again, occupants.shares());
    return store.occupants(highest, reclaimFrom).compose(read -> vertx.executeBlocking(() -> {
      occupants.fill(read);
      List<Decided> replanned = new ArrayList<>(decided.size());
      for (Decided each : decided) {
        // when no node holds a task of lower priority that may be preempted there is nothing to plan, nor to say
        if (!again.contains(each.task().id()) || read.isEmpty()) {
          replanned.add(each);
          continue;
        }
        Decision decision = pipeline.decide(each.request(), snapshot, plugins);
        if (decision.isPlaced()) {
          snapshot.assume(each.request(), decision);
        } else if (decision.nominates() && !decision.victims().isEmpty()) {
          snapshot.nominate(new Nomination(each.task().id(), each.task().priority(), decision.nominatedNodeId(),
              decision.plan(), true), decision.victims());
          reclaims.staged(each, decision, snapshot, occupants);
        } else if (!decision.nominates()) {
          decision = Decision.unschedulable(decision.code(), decision.message() + NONE_SUFFICIENT);
        }
        replanned.add(new Decided(each.task(), each.request(), decision));
      }
      return replanned;
    }, true));
  }

  /**
   * Records an unplaced decision: carries out a new plan, keeps an earlier nomination's reason, or records why the
   * task waits. Answers whether a plan was found stale (the round should be followed by another).
   */
  Future<Boolean> settle(Decided decided) {
    Decision decision = decided.decision();
    UUID id = decided.task().id();
    if (decision.nominates() && decision.victims().isEmpty()) {
      return tasks.setReason(id, ReasonCode.PreemptionPending.name(), decision.plan()).map(false);
    }
    if (!decision.nominates()) {
      if (decision.message().endsWith(NONE_SUFFICIENT) && !decision.message().equals(decided.task().reasonMessage())) {
        metrics.preemptions("none_sufficient", 1);
      }
      return tasks.setReason(id, decision.code().name(), decision.message()).map(false);
    }
    LeaderStore.Fence fence = leadership.fence();
    if (fence == null) {
      return Future.succeededFuture(false);
    }
    PreemptionStore.Plan plan = reclaims.plan(decided, new PreemptionStore.Plan(id, decided.task().priority(),
        decision.nominatedNodeId(), decision.victims(), decision.plan()));
    return store.preemptOn(plan, watchdogSeconds, fence).compose(done -> switch (done.outcome()) {
      case PREEMPTED -> {
        metrics.preemptions("planned", 1);
        if (plan.reclaim()) {
          metrics.reclaim(plan.reclaimQueue());
        }
        metrics.preemptionVictims(plan.victims().size());
        done.victimNodes().forEach((victim, node) -> vertx.eventBus().send(BusAddresses.agentStop(node),
            new Stop(victim).toJson()));
        LOG.info("task " + id + " preempts " + plan.victims().size() + " task(s) on node " + plan.nodeId()
            + " (the plan is in their ledgers)");
        yield Future.succeededFuture(false);
      }
      case STALE -> tasks.setReason(id, decision.code().name(), decision.message() + " A preemption plan on node "
          + plan.nodeId() + " no longer held (a victim or the task itself moved on): planned again.").map(true);
      case FENCED -> {
        leadership.stepDown();
        yield Future.succeededFuture(false);
      }
    });
  }
}
