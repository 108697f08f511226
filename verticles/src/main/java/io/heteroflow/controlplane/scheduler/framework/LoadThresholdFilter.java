package io.heteroflow.controlplane.scheduler.framework;

/**
 * The pipeline's last filter: the load thresholds on each node's last heartbeat (SPEC §3), judged after every
 * other filter so a node is refused for load only when it would otherwise take the task. A node at or over the
 * CPU or memory limit is refused; so is one whose cards under the card limits are too few for the task (the
 * cards it would get otherwise are hot), which is why card picking and shard placement then use only those
 * cards ({@link LoadThresholds#usable}). Reason {@code LoadThresholdExceeded}. For a shard the card check is
 * coarse (some usable card without a whole-card task, under 95 % memory, with room beside its shards; the
 * reserve and the tenant boundary are left to the shard placement). The bind re-checks live rows.
 * A snapshot node's version changes with every heartbeat, so a node that cools down is judged again.
 */
final class LoadThresholdFilter implements FilterPlugin {
  static final String NAME = "load-thresholds";
  private final LoadThresholds limits;

  LoadThresholdFilter(LoadThresholds limits) {
    this.limits = limits;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    String over = limits.nodeOver(node);
    if (over != null) {
      return Status.reject(NAME, ReasonCode.LoadThresholdExceeded, "over load thresholds (" + over + ")");
    }
    NodeInfo usable = limits.usable(node);
    if (usable == node || !(task.gpuRequired() > 0 || task.isShard())) {
      return Status.ok();
    }
    boolean enough = task.isShard() ? anyCardForShard(task, usable) : usable.wholeCardsFor(task) >= task.gpuRequired();
    return enough ? Status.ok()
        : Status.reject(NAME, ReasonCode.LoadThresholdExceeded, "with cards over load thresholds");
  }

  /** Some card holds no whole-card task, is of an allowed model, under 95 % memory and has room for the shard. */
  private static boolean anyCardForShard(TaskRequest task, NodeInfo node) {
    for (CardInfo card : node.cards()) {
      CardUse use = node.use(card.index());
      if (use.wholeTasks() == 0 && NodeInfo.allows(task.gpuModels(), card)
          && card.memoryUsedPercent() < NodeInfo.CARD_MEMORY_FULL_PERCENT
          && use.shardMemoryMb() + task.gpuMemoryMb() <= card.memoryTotalMb()) {
        return true;
      }
    }
    return false;
  }
}
