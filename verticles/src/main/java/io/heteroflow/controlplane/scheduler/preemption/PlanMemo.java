package io.heteroflow.controlplane.scheduler.preemption;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.framework.Occupants;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The best plan across thousands of nodes without planning each (branch and bound), for one round. Every node gets
 * a bound first — the fewest victims and smallest priority sum any plan there can have: the shortest prefix of
 * its ordered candidates that frees enough whole cards — which costs a few integer additions. Nodes are then
 * planned in bound order ({@link VictimPlanner#BEST}'s order) until the next bound cannot beat the best plan
 * found: on 5,000 nodes full of one-card jobs that is one what-if per preemptor, not 5,000. A node's ordered
 * candidates (per preemptor priority), its bound and its plans (per task shape) are kept for the round and
 * computed again only when the round changes that node (a plan staged there, a placement): a burst of
 * preemptors of a few shapes bounds every node once per shape. Valid while a plan depends only on the task's shape,
 * the node and its occupants — what the decision memo assumes of the filters too.
 */
public final class PlanMemo {
  private record Bound(String nodeId, int victims, long prioritySum) {
  }

  private static final Comparator<Bound> BOUND_ORDER = Comparator.comparingInt(Bound::victims)
      .thenComparingLong(Bound::prioritySum).thenComparing(Bound::nodeId);

  /** Every candidate node's bound for one task shape, in bound order, kept current with the round's changes. */
  private static final class Bounds {
    private final Map<String, Bound> byNode = new HashMap<>();
    private final TreeSet<Bound> ordered = new TreeSet<>(BOUND_ORDER);
    private int synced = -1;

    void put(String nodeId, Bound bound) {
      Bound before = bound == null ? byNode.remove(nodeId) : byNode.put(nodeId, bound);
      if (before != null) {
        ordered.remove(before);
      }
      if (bound != null) {
        ordered.add(bound);
      }
    }
  }

  private final Map<Integer, Map<String, List<Occupant>>> ordered = new HashMap<>();
  private final Map<TaskRequest, Map<String, Optional<VictimPlanner.NodePlan>>> plans = new HashMap<>();
  private final Map<TaskRequest, Bounds> bounds = new HashMap<>();
  private int synced;

  /** The best plan for {@code task} among {@code candidates} (the nodes whose refusal victims could cure). */
  public Optional<VictimPlanner.NodePlan> best(TaskRequest task, Snapshot snapshot, Occupants occupants,
                                               Set<String> candidates, Predicate<NodeInfo> fits,
                                               PreemptionRules rules) {
    forgetChanged(snapshot);
    Map<String, List<Occupant>> byNode = ordered.computeIfAbsent(task.priority(), k -> new HashMap<>());
    Map<String, Optional<VictimPlanner.NodePlan>> shapePlans = plans.computeIfAbsent(task.shape(),
        k -> new HashMap<>());
    Bounds shapeBounds = bounds.computeIfAbsent(task.shape(), k -> new Bounds());
    Collection<String> todo = shapeBounds.synced < 0 ? candidates
        : new LinkedHashSet<>(snapshot.changesSince(Math.min(shapeBounds.synced, snapshot.changeCount())));
    for (String nodeId : todo) {
      Bound bound = null;
      if (candidates.contains(nodeId)) {
        List<Occupant> victims = byNode.computeIfAbsent(nodeId, id -> VictimPlanner.candidates(task.priority(),
            occupants.on(id), rules, occupants.now()));
        bound = bound(nodeId, VictimPlanner.freeCards(snapshot.node(nodeId)), victims, task.gpuRequired());
      }
      shapeBounds.put(nodeId, bound);
    }
    shapeBounds.synced = snapshot.changeCount();
    VictimPlanner.NodePlan best = null;
    for (Bound bound : shapeBounds.ordered) {
      if (best != null && BOUND_ORDER.compare(bound, new Bound(best.node().id(), best.victimCount(),
          best.prioritySum())) >= 0) {
        break; // no plan on this node or any later one can beat the best
      }
      String nodeId = bound.nodeId();
      Optional<VictimPlanner.NodePlan> plan = shapePlans.computeIfAbsent(nodeId, id -> VictimPlanner.planOrdered(
          task.gpuRequired(), snapshot.node(id), occupants.on(id), byNode.get(id), fits)
          .map(found -> VictimPlanner.withGangs(found, occupants::gang)));
      if (plan.isPresent() && (best == null || VictimPlanner.BEST.compare(plan.get(), best) < 0)) {
        best = plan.get();
      }
    }
    return Optional.ofNullable(best);
  }

  /** The shortest prefix that frees enough whole cards: no plan on the node has fewer victims or a smaller sum. */
  private static Bound bound(String nodeId, int free, List<Occupant> victims, int wholeCards) {
    long sum = 0;
    for (int count = 1; count <= victims.size(); count++) {
      Occupant victim = victims.get(count - 1);
      free += victim.gpuIndices().size();
      sum += victim.priority();
      if (free >= wholeCards) {
        return new Bound(nodeId, count, sum);
      }
    }
    return null;
  }

  private void forgetChanged(Snapshot snapshot) {
    for (String nodeId : snapshot.changesSince(Math.min(synced, snapshot.changeCount()))) {
      ordered.values().forEach(byNode -> byNode.remove(nodeId));
      plans.values().forEach(byNode -> byNode.remove(nodeId));
    }
    synced = snapshot.changeCount();
  }
}
