package io.heteroflow.controlplane.scheduler.builtin;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * Built-in filter 3 (SPEC §2.1, §10): a coarse GPU-memory check (some card is big enough at all), the
 * inference container cap per node, and the declared {@code cpu_cores} / {@code memory_mb} against what the
 * node has left after the tasks already accounted on it.
 */
public final class ResourcePreFilter implements FilterPlugin {
  public static final String NAME = "resource-prefilter";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME,
      args -> new ResourcePreFilter(args.config().maxInferencePerNode()));
  private final int maxInferencePerNode;

  public ResourcePreFilter(int maxInferencePerNode) {
    this.maxInferencePerNode = maxInferencePerNode;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if (task.gpuMemoryMb() > 0 && !node.cards().isEmpty()) {
      boolean anyBigEnough = false;
      for (CardInfo card : node.cards()) {
        anyBigEnough |= card.memoryTotalMb() >= task.gpuMemoryMb();
      }
      if (!anyBigEnough) {
        return Status.reject(name(), ReasonCode.InsufficientResources, "without a card of " + task.gpuMemoryMb() + " MB");
      }
    }
    if (task.isInference() && node.inferenceTasks() >= maxInferencePerNode) {
      return Status.reject(name(), ReasonCode.InsufficientResources, "at the inference container cap");
    }
    if (task.cpuCores() > 0 && node.cpuFree() + 1e-9 < task.cpuCores()) {
      return Status.reject(name(), ReasonCode.InsufficientResources, "short of CPU cores");
    }
    if (task.memoryMb() > 0 && node.memoryFreeMb() < task.memoryMb()) {
      return Status.reject(name(), ReasonCode.InsufficientResources, "short of memory");
    }
    return Status.ok();
  }
}
