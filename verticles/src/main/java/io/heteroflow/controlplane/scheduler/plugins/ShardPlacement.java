package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.scheduler.framework.ShardPlacer;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.protocol.ShardQos;

/**
 * Fractional shards (SPEC §3, §5): a card can take a shard of M MB when no whole-card task holds it, its
 * memory use is under 95 %, M fits under its capacity (total − reserve, reserve = max(500 MB, 10 %)) minus
 * the shards already there, and the newcomer may share with every tenant already on it. Among such cards
 * the fullest that still fits is chosen (best fit keeps whole cards free).
 */
public final class ShardPlacement implements ShardPlacer {
  private final SchedulerConfig config;

  public ShardPlacement(SchedulerConfig config) {
    this.config = config;
  }

  /** Why a node cannot take the shard, or OK. */
  public enum Fit { OK, NO_CARD_FITS, ONLY_OTHER_TENANTS_CARDS }

  public Fit check(TaskRequest task, NodeInfo node, TenantBoundary boundary) {
    boolean fitsIgnoringTenants = false;
    for (CardInfo card : node.cards()) {
      if (fitsMemory(task, node, card)) {
        fitsIgnoringTenants = true;
        if (boundary.mayJoin(task.tenant(), node.use(card.index()).tenants())) {
          return Fit.OK;
        }
      }
    }
    return fitsIgnoringTenants ? Fit.ONLY_OTHER_TENANTS_CARDS : Fit.NO_CARD_FITS;
  }

  @Override
  public ShardAssignment place(TaskRequest task, NodeInfo node, TenantBoundary boundary, CycleState state) {
    CardInfo best = null;
    long bestLeft = Long.MAX_VALUE;
    for (CardInfo card : node.cards()) {
      if (fitsMemory(task, node, card) && boundary.mayJoin(task.tenant(), node.use(card.index()).tenants())) {
        long left = capacity(card) - node.use(card.index()).shardMemoryMb() - task.gpuMemoryMb();
        if (left < bestLeft) {
          best = card;
          bestLeft = left;
        }
      }
    }
    if (best == null) {
      return null;
    }
    int computePercent = (int) Math.max(1, Math.min(100, Math.round(100.0 * task.gpuMemoryMb() / best.memoryTotalMb())));
    return new ShardAssignment(best.index(), task.gpuMemoryMb(), computePercent,
        ShardQos.levelFor(node.gpuVendor(), best.model()));
  }

  /** The memory of a card that shards may use together. */
  public long capacity(CardInfo card) {
    return card.memoryTotalMb() - config.reserveMb(card.memoryTotalMb());
  }

  private boolean fitsMemory(TaskRequest task, NodeInfo node, CardInfo card) {
    CardUse use = node.use(card.index());
    return use.wholeTasks() == 0 && NodeInfo.allows(task.gpuModels(), card)
        && card.memoryUsedPercent() < NodeInfo.CARD_MEMORY_FULL_PERCENT
        && use.shardMemoryMb() + task.gpuMemoryMb() <= capacity(card);
  }
}
