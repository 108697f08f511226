package io.heteroflow.controlplane.scheduler.framework;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * One round's view of the queues' guarantees against their use (SPEC §13 reclaim), in GPU-equivalents: each
 * queue's subtree's charged use (a lender's lent capacity counts as the lender's, so it is used, not borrowable
 * back) staged as the round plans. Use above a guarantee is borrowed; a queue below its guarantee may reclaim it.
 * {@code root} is the whole fleet and never a victim of reclaim. The round also notes the queue of each task that
 * asked to preempt, since a task request does not carry it (placement never depends on it).
 */
public final class QueueShares {
  public static final QueueShares NONE = new QueueShares(Map.of(), Map.of(), Map.of(), Map.of());
  private static final double EPSILON = 1e-9;
  private final Map<String, String> parents;
  private final Map<String, Double> guaranteed;
  private final Map<String, Double> factors;
  /** Subtree use per queue, staged. */
  private final Map<String, Double> use = new HashMap<>();
  private final Map<UUID, String> queueOf = new HashMap<>();

  /** {@code charged}: each queue's own charged use (not its descendants'); {@code factors}: card model → GPU-eq. */
  public QueueShares(Map<String, String> parents, Map<String, Double> guaranteed, Map<String, Double> charged,
                     Map<String, Double> factors) {
    this.parents = new HashMap<>(parents); // root's parent is null: no Map.copyOf
    this.guaranteed = Map.copyOf(guaranteed);
    this.factors = Map.copyOf(factors);
    charged.forEach(this::add);
  }

  public boolean any() {
    return guaranteed.values().stream().anyMatch(each -> each > 0);
  }

  public void noteQueue(UUID taskId, String queue) {
    queueOf.put(taskId, queue);
  }

  /** The queue of a task that asked to preempt this round, or null. */
  public String queueOf(UUID taskId) {
    return queueOf.get(taskId);
  }

  public double use(String queue) {
    return use.getOrDefault(queue, 0.0);
  }

  public double guaranteed(String queue) {
    return guaranteed.getOrDefault(queue, 0.0);
  }

  /** Whether a task of {@code queue} needing {@code need} fits within its queue's guarantee: it may reclaim. */
  public boolean mayReclaim(String queue, double need) {
    return queue != null && !"root".equals(queue) && guaranteed(queue) > 0
        && use(queue) + need <= guaranteed(queue) + EPSILON;
  }

  /** The queues (root aside) using more than their guarantee: what they use above it is borrowed. */
  public Set<String> overGuarantee() {
    Set<String> over = new HashSet<>();
    use.forEach((queue, used) -> {
      if (!"root".equals(queue) && used > guaranteed(queue) + EPSILON) {
        over.add(queue);
      }
    });
    return over;
  }

  /** Use against guarantee: how far over its share a queue is (infinite for use without a guarantee). */
  public double overShare(String queue) {
    double share = guaranteed(queue);
    return share <= 0 ? (use(queue) > 0 ? Double.POSITIVE_INFINITY : 0) : use(queue) / share;
  }

  /**
   * Whether {@code gpuEq} more may be taken from {@code victimQueue} for a reclaim by {@code reclaimer}, after
   * {@code taken} (per queue, as {@link #take} keeps it), without taking any queue on the victim's chain below its
   * guarantee: the queues above the victim that are also above the reclaimer get back what they give, and root is
   * the whole fleet.
   */
  public boolean mayTake(String victimQueue, String reclaimer, double gpuEq, Map<String, Double> taken) {
    Set<String> shared = chain(reclaimer);
    for (String up : chain(victimQueue)) {
      if (!"root".equals(up) && !shared.contains(up)
          && use(up) - taken.getOrDefault(up, 0.0) - gpuEq < guaranteed(up) - EPSILON) {
        return false;
      }
    }
    return true;
  }

  /** Notes {@code gpuEq} taken from {@code victimQueue} (and so from each queue above it) in {@code taken}. */
  public void take(String victimQueue, double gpuEq, Map<String, Double> taken) {
    chain(victimQueue).forEach(up -> taken.merge(up, gpuEq, Double::sum));
  }

  /** Whether {@code a} and {@code b} are one queue or one is above the other (their use is one). */
  public boolean related(String a, String b) {
    return chain(a).contains(b) || chain(b).contains(a);
  }

  /** A planned reclaim staged: the victims' use leaves their queues, the reclaimer's need joins its own. */
  public void staged(String reclaimer, double need, Map<String, Double> takenByVictimQueue) {
    add(reclaimer, need);
    takenByVictimQueue.forEach((queue, taken) -> add(queue, -taken));
  }

  /** What a task of {@code gpuRequired} whole cards (or a shard of {@code shardMb}) would use on {@code node}. */
  public double need(NodeInfo node, int gpuRequired, long shardMb) {
    double most = 0;
    long memory = 1;
    for (CardInfo card : node.cards()) {
      double factor = factors.getOrDefault(card.model(), 1.0);
      if (factor > most) {
        most = factor;
        memory = Math.max(1, card.memoryTotalMb());
      }
    }
    most = node.cards().isEmpty() ? 1.0 : most;
    // the dearest card of the node: a reclaimer never counts on less than it may take
    return gpuRequired > 0 ? gpuRequired * most : most * shardMb / (double) memory;
  }

  private void add(String queue, double amount) {
    for (String up : chain(queue)) {
      use.merge(up, amount, Double::sum);
    }
  }

  private Set<String> chain(String queue) {
    Set<String> chain = new java.util.LinkedHashSet<>();
    for (String up = queue; up != null && chain.add(up); up = parents.get(up)) {
      // walks to the root
    }
    return chain;
  }
}
