package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.BindPlugin;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The default card picking (no NVLink data, or nvlink disabled; SPEC §4.2 "fewest active tasks per card"):
 * a whole-card task only gets cards that hold no task at all, so among the free cards of allowed models that
 * meet {@code gpu_memory_mb} every candidate has zero tasks and the lowest indices are taken.
 */
public final class FewestTasksCardPicker implements BindPlugin {
  @Override
  public String name() {
    return "fewest-tasks";
  }

  @Override
  public List<Integer> pickCards(TaskRequest task, NodeInfo node, CycleState state) {
    List<CardInfo> candidates = new ArrayList<>(node.freeCards(task.gpuModels()));
    candidates.removeIf(card -> task.gpuMemoryMb() > 0 && card.memoryTotalMb() - card.memoryUsedMb() < task.gpuMemoryMb());
    candidates.sort(Comparator.comparingInt(CardInfo::index));
    if (candidates.size() < task.gpuRequired()) {
      return List.of();
    }
    return candidates.subList(0, task.gpuRequired()).stream().map(CardInfo::index).toList();
  }
}
