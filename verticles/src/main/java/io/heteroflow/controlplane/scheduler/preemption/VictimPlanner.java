package io.heteroflow.controlplane.scheduler.preemption;

import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * The minimal victim set (SPEC §6): per node, the candidates in {@link PreemptionRules#VICTIM_ORDER}, taking
 * one more at a time until the node as it would be without them passes the preemptor's filters; across the
 * feasible nodes, fewest victims, then the smaller priority sum, then the node id. When no node becomes
 * feasible even with all its candidates gone, nobody is preempted.
 */
public final class VictimPlanner {
  private VictimPlanner() {}

  /**
   * A node, the victims on it, the node as it would be once they are gone, and the victims elsewhere: the other
   * members of any task group a victim belongs to (a group is preempted only as a whole, SPEC §9).
   */
  public record NodePlan(NodeInfo node, List<Occupant> victims, NodeInfo freed, List<Occupant> elsewhere) {
    public NodePlan(NodeInfo node, List<Occupant> victims, NodeInfo freed) {
      this(node, victims, freed, List.of());
    }

    public NodePlan {
      victims = List.copyOf(victims);
      elsewhere = List.copyOf(elsewhere);
    }

    /** Every task the plan preempts, here and elsewhere. */
    public List<Occupant> all() {
      List<Occupant> all = new ArrayList<>(victims);
      all.addAll(elsewhere);
      return all;
    }

    public int victimCount() {
      return victims.size() + elsewhere.size();
    }

    public int prioritySum() {
      return all().stream().mapToInt(Occupant::priority).sum();
    }
  }

  /** Fewest victims (a group's members elsewhere included), then the smaller priority sum, then the node id. */
  public static final Comparator<NodePlan> BEST = Comparator.<NodePlan>comparingInt(NodePlan::victimCount)
      .thenComparingInt(NodePlan::prioritySum).thenComparing(plan -> plan.node().id());

  /** The plan with the other members of every task group among its victims added: their whole groups go. */
  public static NodePlan withGangs(NodePlan plan, java.util.function.Function<UUID, List<Occupant>> gangOf) {
    Set<UUID> here = new HashSet<>();
    plan.victims().forEach(victim -> here.add(victim.taskId()));
    Map<UUID, Occupant> elsewhere = new java.util.LinkedHashMap<>();
    for (Occupant victim : plan.victims()) {
      if (victim.groupId() != null) {
        gangOf.apply(victim.groupId()).stream().filter(member -> !here.contains(member.taskId()))
            .forEach(member -> elsewhere.putIfAbsent(member.taskId(), member));
      }
    }
    return elsewhere.isEmpty() ? plan
        : new NodePlan(plan.node(), plan.victims(), plan.freed(), List.copyOf(elsewhere.values()));
  }

  /**
   * The best plan for a preemptor of {@code priority}, given each candidate node with all its active tasks;
   * {@code fits} is the preemptor's filter chain on a node.
   */
  public static Optional<NodePlan> plan(int priority, Map<NodeInfo, List<Occupant>> nodes, Predicate<NodeInfo> fits,
                                        PreemptionRules rules, Instant now) {
    NodePlan best = null;
    for (Map.Entry<NodeInfo, List<Occupant>> node : nodes.entrySet()) {
      NodePlan plan = planNode(priority, node.getKey(), node.getValue(), fits, rules, now).orElse(null);
      if (plan != null && (best == null || BEST.compare(plan, best) < 0)) {
        best = plan;
      }
    }
    return Optional.ofNullable(best);
  }

  /** The shortest prefix of this node's ordered candidates after which the preemptor fits, if any. */
  static Optional<NodePlan> planNode(int priority, NodeInfo node, List<Occupant> occupants, Predicate<NodeInfo> fits,
                                     PreemptionRules rules, Instant now) {
    return planOrdered(0, node, occupants, candidates(priority, occupants, rules, now), fits);
  }

  /** The occupants that may be victims of a preemptor of {@code priority}, in the order they are taken. */
  public static List<Occupant> candidates(int priority, List<Occupant> occupants, PreemptionRules rules, Instant now) {
    return occupants.stream().filter(each -> rules.isCandidate(each, priority, now))
        .sorted(PreemptionRules.VICTIM_ORDER).toList();
  }

  /**
   * {@link #planNode} on candidates already in victim order, for a preemptor of {@code wholeCards} whole cards: a
   * prefix that cannot leave that many cards free (free now plus what it frees) is not tried — the locked
   * resource filter would refuse it — so a node full of one-card jobs costs one what-if, not one per victim.
   */
  static Optional<NodePlan> planOrdered(int wholeCards, NodeInfo node, List<Occupant> occupants,
                                        List<Occupant> candidates, Predicate<NodeInfo> fits) {
    int free = freeCards(node);
    for (int count = 1; count <= candidates.size(); count++) {
      free += candidates.get(count - 1).gpuIndices().size();
      if (free < wholeCards) {
        continue;
      }
      List<Occupant> victims = candidates.subList(0, count);
      NodeInfo freed = without(node, occupants, victims);
      if (fits.test(freed)) {
        return Optional.of(new NodePlan(node, List.copyOf(victims), freed));
      }
    }
    return Optional.empty();
  }

  static int freeCards(NodeInfo node) {
    int free = 0;
    for (CardInfo card : node.cards()) {
      free += node.cardIsFree(card) ? 1 : 0;
    }
    return free;
  }

  /**
   * {@code node} with what {@code victims} hold given back: their whole cards and shard memory, CPU and memory.
   * A card's tenants are those of the tasks still on it, so a card that keeps another tenant's shard stays
   * that tenant's to share.
   */
  static NodeInfo without(NodeInfo node, List<Occupant> occupants, List<Occupant> victims) {
    Set<UUID> gone = new HashSet<>();
    victims.forEach(victim -> gone.add(victim.taskId()));
    Map<Integer, Set<String>> tenantsLeft = new HashMap<>();
    for (Occupant stays : occupants) {
      if (!gone.contains(stays.taskId())) {
        cardsOf(stays).forEach(card -> tenantsLeft.computeIfAbsent(card, k -> new HashSet<>()).add(stays.tenant()));
      }
    }
    Map<Integer, CardUse> use = new HashMap<>(node.cardUse());
    int cardsFreed = 0;
    double cpuFreed = 0;
    long memoryFreed = 0;
    for (Occupant victim : victims) {
      for (int card : victim.gpuIndices()) {
        CardUse before = use.getOrDefault(card, CardUse.NONE);
        use.put(card, new CardUse(Math.max(0, before.wholeTasks() - 1), before.shards(), before.shardMemoryMb(),
            Set.of()));
        cardsFreed++;
      }
      if (victim.holdsShard()) {
        CardUse before = use.getOrDefault(victim.shardCard(), CardUse.NONE);
        use.put(victim.shardCard(), new CardUse(before.wholeTasks(), Math.max(0, before.shards() - 1),
            Math.max(0, before.shardMemoryMb() - victim.shardMemoryMb()), Set.of()));
      }
      cpuFreed += victim.cpuCores();
      memoryFreed += victim.memoryMb();
    }
    Map<Integer, Set<String>> victimTenants = new HashMap<>();
    for (Occupant victim : victims) {
      cardsOf(victim).forEach(card -> victimTenants.computeIfAbsent(card, k -> new HashSet<>()).add(victim.tenant()));
    }
    for (Occupant victim : victims) {
      for (int card : cardsOf(victim)) {
        CardUse after = use.get(card);
        // a tenant leaves the card only when a victim brought it and no task staying there has it; a tenant
        // the occupants do not show (a placement staged this round) stays
        Set<String> tenants = new HashSet<>(node.use(card).tenants());
        tenants.removeIf(tenant -> victimTenants.get(card).contains(tenant)
            && !tenantsLeft.getOrDefault(card, Set.of()).contains(tenant));
        if (after.isEmpty()) {
          use.remove(card);
        } else {
          use.put(card, new CardUse(after.wholeTasks(), after.shards(), after.shardMemoryMb(), tenants));
        }
      }
    }
    Map<Integer, Long> memoryGiven = new HashMap<>();
    for (Occupant victim : victims) {
      if (victim.holdsShard()) {
        memoryGiven.merge(victim.shardCard(), victim.shardMemoryMb(), Long::sum);
      }
    }
    List<CardInfo> cards = new ArrayList<>();
    for (CardInfo card : node.cards()) {
      // the memory a card reports is its tasks' processes: gone with them once they stop
      long used = use.containsKey(card.index()) ? card.memoryUsedMb() - memoryGiven.getOrDefault(card.index(), 0L)
          : cardsOf(victims).contains(card.index()) ? 0 : card.memoryUsedMb();
      cards.add(new CardInfo(card.index(), card.model(), card.memoryTotalMb(), Math.max(0, used),
          card.utilizationPercent(), card.temperatureC(), card.numaNode()));
    }
    return new NodeInfo(node.id(), node.gpuVendor(), node.status(), node.executable(), node.dedicatedTenant(),
        node.region(), node.zone(), node.rack(), node.labels(), node.topology(), node.cpuCores(), node.cpuPercent(),
        node.memoryTotalGb(), node.memoryUsedMb(), node.gpuTotal(), Math.max(0, node.gpuUsed() - cardsFreed),
        Math.max(0, node.cpuAllocated() - cpuFreed), Math.max(0, node.memoryAllocatedMb() - memoryFreed),
        node.inferenceTasks(), cards, use, node.cordoned(), node.serviceReplicas());
  }

  private static List<Integer> cardsOf(List<Occupant> occupants) {
    return occupants.stream().flatMap(occupant -> cardsOf(occupant).stream()).toList();
  }

  private static List<Integer> cardsOf(Occupant occupant) {
    List<Integer> cards = new ArrayList<>(occupant.gpuIndices());
    if (occupant.holdsShard()) {
      cards.add(occupant.shardCard());
    }
    return cards;
  }
}
