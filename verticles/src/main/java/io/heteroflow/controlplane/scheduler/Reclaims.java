package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.scheduler.BindDispatcher.Decided;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Occupants;
import io.heteroflow.controlplane.scheduler.framework.QueueShares;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.preemption.ReclaimPlanner;
import io.heteroflow.controlplane.store.PreemptionStore;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The reclaim side of a round's preemption (SPEC §13): which queues' tasks a round must read as possible victims
 * whatever their priority (those over their guarantee, when a task that asked to preempt is below its own), the
 * round's view staged as reclaim plans are made (so the next plan neither counts on the same borrowed capacity nor
 * takes a queue below its guarantee), and each plan's queue and need carried to the transaction that re-checks
 * them under the queues' locks. Made on the round's worker, read on the event loop once the plans are settled.
 */
final class Reclaims {
  /** Planned reclaims of the round: preemptor → its queue and what it needs, in GPU-eq. */
  private final Map<UUID, Map.Entry<String, Double>> planned = new ConcurrentHashMap<>();

  /**
   * Notes the queue of each task that asked to preempt; answers the queues over their guarantee when some of them
   * may reclaim (else none: the round reads only the victims of lower priority).
   */
  Set<String> note(List<Decided> decided, Set<UUID> wanted, QueueShares shares) {
    planned.clear(); // a round's plans are settled before the next round plans (one round at a time)
    if (!shares.any()) {
      return Set.of();
    }
    boolean reclaiming = false;
    for (Decided each : decided) {
      if (wanted.contains(each.task().id())) {
        shares.noteQueue(each.task().id(), each.task().queue());
        reclaiming |= shares.mayReclaim(each.task().queue(), 0);
      }
    }
    return reclaiming ? new HashSet<>(shares.overGuarantee()) : Set.of();
  }

  /** A plan the round has just staged: when it is a reclaim, the view moves the borrowed use back. */
  void staged(Decided each, Decision decision, Snapshot snapshot, Occupants occupants) {
    if (decision.plan() == null || !decision.plan().startsWith(ReclaimPlanner.PREFIX)) {
      return;
    }
    QueueShares shares = occupants.shares();
    NodeInfo node = snapshot.node(decision.nominatedNodeId());
    double need = node == null ? 0 : shares.need(node, each.request().gpuRequired(), each.request().gpuMemoryMb());
    Map<String, Double> taken = new HashMap<>();
    Set<UUID> victims = new HashSet<>(decision.victims());
    occupants.among(victims).forEach(victim -> taken.merge(victim.queue(), victim.gpuEq(), Double::sum));
    shares.staged(each.task().queue(), need, taken);
    planned.put(each.task().id(), Map.entry(each.task().queue(), need));
  }

  /** The plan to carry out, marked a reclaim (with its queue and need) when the round planned it as one. */
  PreemptionStore.Plan plan(Decided decided, PreemptionStore.Plan plan) {
    Map.Entry<String, Double> reclaim = planned.remove(decided.task().id());
    return reclaim == null ? plan : new PreemptionStore.Plan(plan.preemptor(), plan.priority(), plan.nodeId(),
        plan.victims(), plan.description(), reclaim.getKey(), reclaim.getValue());
  }
}
