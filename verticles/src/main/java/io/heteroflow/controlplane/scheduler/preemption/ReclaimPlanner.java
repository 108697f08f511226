package io.heteroflow.controlplane.scheduler.preemption;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.framework.Occupants;
import io.heteroflow.controlplane.scheduler.framework.QueueShares;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Reclaim (SPEC §13): a task whose queue is below its guarantee, and would stay within it with the task, takes back
 * capacity other queues borrowed — use above their own guarantee — through the ordinary preemption machinery (the
 * minimal victim set on one node, the protected runtime, the checkpoint handshake, whole task groups). Its victims
 * may have any priority, since borrowed capacity is lent only until its owner wants it; they are taken lowest
 * priority first, then from the queue most over its share, then in {@link PreemptionRules#VICTIM_ORDER}; a victim
 * whose removal would take its queue (or a queue above it) below its guarantee is passed over.
 */
public final class ReclaimPlanner {
  /** How a reclaim plan's text begins (ledger, reason): the plan is a reclaim, and for which queue. */
  public static final String PREFIX = io.heteroflow.controlplane.scheduler.framework.Nomination.RECLAIM;

  private ReclaimPlanner() {}

  /** Lowest priority, then the queue most over its share, then the ordinary victim order. */
  public static Comparator<Occupant> order(QueueShares shares) {
    return Comparator.comparingInt(Occupant::priority)
        .thenComparing(victim -> shares.overShare(victim.queue()), Comparator.reverseOrder())
        .thenComparing(PreemptionRules.VICTIM_ORDER);
  }

  /**
   * The occupants of one node that a reclaimer of {@code reclaimer} may take, in the order taken: any prefix of it
   * keeps every victim's queue at or above its guarantee.
   */
  public static List<Occupant> candidates(String reclaimer, List<Occupant> occupants, QueueShares shares,
                                          PreemptionRules rules, Instant now) {
    Set<String> over = shares.overGuarantee();
    List<Occupant> ordered = occupants.stream().filter(each -> rules.mayBeVictim(each, now)
        && over.contains(each.queue()) && !shares.related(each.queue(), reclaimer)).sorted(order(shares)).toList();
    Map<String, Double> taken = new HashMap<>();
    List<Occupant> kept = new ArrayList<>();
    for (Occupant each : ordered) {
      if (shares.mayTake(each.queue(), reclaimer, each.gpuEq(), taken)) {
        shares.take(each.queue(), each.gpuEq(), taken);
        kept.add(each);
      }
    }
    return kept;
  }

  /**
   * The best reclaim plan for {@code task} of {@code reclaimer} among {@code nodes} (fewest victims, then the
   * smaller priority sum, then the node id), or none: on a node where the task would not fit its queue's guarantee
   * (its dearest card counted) nothing is planned, and a plan whose task groups' members elsewhere would take a
   * queue below its guarantee is dropped.
   */
  public static Optional<VictimPlanner.NodePlan> plan(TaskRequest task, String reclaimer, Snapshot snapshot,
                                                      Occupants occupants, Collection<String> nodes,
                                                      Predicate<NodeInfo> fits, PreemptionRules rules) {
    QueueShares shares = occupants.shares();
    VictimPlanner.NodePlan best = null;
    for (String nodeId : nodes) {
      NodeInfo node = snapshot.node(nodeId);
      if (node == null || !shares.mayReclaim(reclaimer, shares.need(node, task.gpuRequired(), task.gpuMemoryMb()))) {
        continue;
      }
      Optional<VictimPlanner.NodePlan> plan = planNode(reclaimer, task.gpuRequired(), node, occupants.on(nodeId),
          fits, shares, rules, occupants.now()).map(found -> VictimPlanner.withGangs(found, occupants::gang));
      if (plan.isPresent() && keepsGuarantees(plan.get(), reclaimer, shares)
          && (best == null || VictimPlanner.BEST.compare(plan.get(), best) < 0)) {
        best = plan.get();
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * The reclaim plan on one node for a task of {@code wholeCards} cards: the shortest prefix of the node's reclaim
   * candidates ({@link #candidates}) after which the task fits, if any (task groups' members elsewhere not added).
   */
  public static Optional<VictimPlanner.NodePlan> planNode(String reclaimer, int wholeCards, NodeInfo node,
                                                          List<Occupant> here, Predicate<NodeInfo> fits,
                                                          QueueShares shares, PreemptionRules rules, Instant now) {
    return VictimPlanner.planOrdered(wholeCards, node, here, candidates(reclaimer, here, shares, rules, now), fits);
  }

  /** What the plan takes from each victim queue, in GPU-eq (to stage the round's view once it is carried out). */
  public static Map<String, Double> takenByQueue(VictimPlanner.NodePlan plan) {
    Map<String, Double> taken = new HashMap<>();
    plan.all().forEach(victim -> taken.merge(victim.queue(), victim.gpuEq(), Double::sum));
    return taken;
  }

  private static boolean keepsGuarantees(VictimPlanner.NodePlan plan, String reclaimer, QueueShares shares) {
    Map<String, Double> taken = new HashMap<>();
    for (Occupant victim : plan.all()) {
      if (!shares.mayTake(victim.queue(), reclaimer, victim.gpuEq(), taken)) {
        return false;
      }
      shares.take(victim.queue(), victim.gpuEq(), taken);
    }
    return true;
  }
}
