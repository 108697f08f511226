package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.plan.FairShare;
import io.heteroflow.controlplane.store.PlanStore;
import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.vertx.core.Future;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The round's order between queues (SPEC §13, {@link FairShare}): read once per round — the tree, each queue's
 * use and, when there is more than the root, the head of every queue, so each queue's first tasks are in every
 * round however long another queue is. With the root alone the order is the queue order (priority, then FIFO).
 */
final class FairShareOrder {
  /** How many of each queue's first pending tasks every round takes along. */
  static final int HEAD = 20;
  /** A shard's demand before it is placed, in GPU-equivalents per MB (as a part of an 80 GB card). */
  private static final double SHARD_EQ_PER_MB = 1.0 / 81920;

  private final QueueStore queues;
  private final PlanStore plans;
  private Map<String, FairShare.Queue> tree = Map.of();
  private Map<String, FairShare.Amount> use = Map.of();
  private Map<String, Double> factors = Map.of();

  FairShareOrder(QueueStore queues, PlanStore plans) {
    this.queues = queues;
    this.plans = plans;
  }

  /**
   * Brings the view up to date from the round's queue tree; answers the heads of every queue (none when the root is
   * the only queue).
   */
  Future<List<TaskRecord>> read(List<QueueRecord> listed) {
    Map<String, FairShare.Queue> named = new HashMap<>();
    listed.forEach(queue -> named.put(queue.name(), new FairShare.Queue(queue.name(), queue.parent(), queue.weight())));
    tree = named;
    if (listed.size() < 2) {
      use = Map.of();
      return Future.succeededFuture(List.of());
    }
    Future<Map<String, FairShare.Amount>> shares = plans.queueShares();
    Future<Map<String, Double>> equivalents = queues.gpuEquivalents();
    Future<List<TaskRecord>> heads = plans.queueHeads(HEAD);
    return Future.all(shares, equivalents, heads).map(all -> {
      use = shares.result();
      factors = equivalents.result();
      return heads.result();
    });
  }

  /** {@code items} (in queue order) in fair-share order between their queues. */
  <T> List<T> order(List<T> items, Function<T, String> queueOf, Function<T, FairShare.Amount> demandOf,
                    Snapshot snapshot) {
    if (tree.size() < 2) {
      return items;
    }
    return FairShare.order(items, queueOf, demandOf, tree, use, total(snapshot));
  }

  /** What a task asks for, before it is placed: whole cards at 1.0 each, a shard by its memory. */
  static FairShare.Amount demand(TaskRecord task) {
    double gpuEq = task.gpuRequired() > 0 ? task.gpuRequired() : Math.min(1.0, task.gpuMemoryMb() * SHARD_EQ_PER_MB);
    return new FairShare.Amount(gpuEq, task.cpuCores(), task.memoryMb());
  }

  /** The fleet's schedulable total: every card at its model's factor, every core, all memory. */
  private FairShare.Amount total(Snapshot snapshot) {
    double gpuEq = 0;
    double cpu = 0;
    double memory = 0;
    for (NodeInfo node : snapshot.nodeViews()) {
      for (CardInfo card : node.cards()) {
        gpuEq += card.model() == null ? 1.0 : factors.getOrDefault(card.model(), 1.0);
      }
      cpu += node.cpuCores();
      memory += node.memoryTotalGb() * 1024;
    }
    return new FairShare.Amount(gpuEq, cpu, memory);
  }
}
