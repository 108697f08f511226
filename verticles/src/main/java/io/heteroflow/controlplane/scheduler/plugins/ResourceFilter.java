package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * {@code resource-filter} (SPEC §3), locked on. Whole-card task of N: N cards with nothing allocated and under
 * 95 % memory use ({@code gpu_memory_mb} given as well must be free on each: an admission condition only).
 * Fractional task ({@code gpu_memory_mb} only): one card that can take the shard ({@link ShardPlacement}),
 * where a card that fits but holds a tenant the newcomer may not share with does not count
 * ({@code NoTenantEligibleGPU} when that alone leaves no card). A task without GPUs passes.
 */
public final class ResourceFilter implements FilterPlugin {
  public static final String NAME = "resource-filter";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME,
      args -> new ResourceFilter(new ShardPlacement(args.config())));
  private final ShardPlacement shards;

  public ResourceFilter(ShardPlacement shards) {
    this.shards = shards;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if (task.isShard()) {
      return switch (shards.check(task, node, snapshot.boundary())) {
        case OK -> Status.ok();
        case ONLY_OTHER_TENANTS_CARDS -> Status.reject(NAME, ReasonCode.NoTenantEligibleGPU,
            "with room only on other tenants' cards");
        case NO_CARD_FITS -> Status.reject(NAME, ReasonCode.InsufficientResources,
            "without " + task.gpuMemoryMb() + " MB free on one card");
      };
    }
    if (task.gpuRequired() <= 0) {
      return Status.ok();
    }
    if (node.wholeCardsFor(task) < task.gpuRequired()) {
      return Status.reject(NAME, ReasonCode.InsufficientResources, "fewer than " + task.gpuRequired() + " free cards");
    }
    return Status.ok();
  }
}
