package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * {@code resource-filter} (SPEC §3), locked on: a whole-card task of N cards needs N cards without an
 * active allocation and under 95 % memory use; {@code gpu_memory_mb} given as well must fit on each of them
 * (an admission condition only). A task without GPUs passes.
 */
public final class ResourceFilter implements FilterPlugin {
  public static final String NAME = "resource-filter";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node) {
    if (task.gpuRequired() <= 0) {
      return Status.ok();
    }
    long fitting = node.freeCards(task.gpuModels()).stream()
        .filter(card -> task.gpuMemoryMb() <= 0 || card.memoryTotalMb() - card.memoryUsedMb() >= task.gpuMemoryMb())
        .count();
    int free = (int) Math.min(fitting, node.freeCardCount(task.gpuModels()));
    if (free < task.gpuRequired()) {
      return Status.reject(NAME, ReasonCode.InsufficientResources,
          "fewer than " + task.gpuRequired() + " free cards");
    }
    return Status.ok();
  }
}
